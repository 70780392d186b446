from __future__ import annotations

import time
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from backend.api_keys import ApiKeyService
from backend.auth import AuthService
from backend.errors import NotFound, ValidationFailed
from backend.models import UsageRecord, User, utcnow
from backend.users import UserAdminService

from .test_auth import _run_at_once


@pytest.fixture
def auth(session_factory, fast_hasher):
    return AuthService(session_factory, 3600, password_hasher=fast_hasher)


@pytest.fixture
def admin_service(session_factory):
    return UserAdminService(session_factory)


@pytest.fixture
def people(auth):
    root = auth.sign_up("root", "correct horse")
    bob = auth.sign_up("bob", "correct horse")
    carol = auth.sign_up("carol", "correct horse", signup_mode="approval")
    return root, bob, carol


def _row(service, user_id):
    return next(r for r in service.list_users() if r.id == user_id)


def test_list_users_shows_roles_statuses_keys_and_todays_tokens(admin_service, people, session_factory):
    root, bob, carol = people
    keys = ApiKeyService(session_factory)
    keys.create_key(bob.id, "a")
    revoked, _ = keys.create_key(bob.id, "b")
    keys.revoke_key(bob.id, revoked.id)
    with session_factory() as db:
        db.add(UsageRecord(user_id=bob.id, source="chat", prompt_tokens=10, completion_tokens=5))
        db.add(UsageRecord(user_id=bob.id, source="api", prompt_tokens=1, completion_tokens=2))
        db.add(UsageRecord(user_id=bob.id, source="api", prompt_tokens=100, completion_tokens=100,
                           created_at=utcnow() - timedelta(days=2)))
        db.commit()
    rows = admin_service.list_users()
    assert [r.username for r in rows] == ["root", "bob", "carol"]
    assert [(r.role, r.status) for r in rows] == [("admin", "active"), ("user", "active"), ("user", "pending")]
    bob_row = _row(admin_service, bob.id)
    assert (bob_row.tokens_today, bob_row.api_keys) == (18, 1)
    assert (_row(admin_service, carol.id).tokens_today, _row(admin_service, carol.id).api_keys) == (0, 0)


def test_approve_disable_and_re_enable(admin_service, auth, people):
    root, bob, carol = people
    admin_service.set_status(root.id, carol.id, "active")
    token = auth.log_in("carol", "correct horse")
    admin_service.set_status(root.id, carol.id, "disabled")
    assert auth.user_for_session(token) is None
    admin_service.set_status(root.id, carol.id, "active")
    assert auth.user_for_session(token) is None  # the sessions were deleted, not suspended
    assert auth.user_for_session(auth.log_in("carol", "correct horse")).username == "carol"


def test_bad_status_role_and_unknown_ids(admin_service, people):
    root, bob, _ = people
    with pytest.raises(ValidationFailed):
        admin_service.set_status(root.id, bob.id, "pending")
    with pytest.raises(ValidationFailed):
        admin_service.set_role(root.id, bob.id, "owner")
    with pytest.raises(NotFound):
        admin_service.set_status(root.id, "0" * 32, "disabled")
    with pytest.raises(NotFound):
        admin_service.set_role(root.id, "0" * 32, "admin")


def test_nobody_changes_his_own_status_or_role(admin_service, people):
    root, _, _ = people
    with pytest.raises(ValidationFailed):
        admin_service.set_status(root.id, root.id, "disabled")
    with pytest.raises(ValidationFailed):
        admin_service.set_role(root.id, root.id, "user")


def test_the_last_active_admin_cannot_be_disabled_or_demoted(admin_service, people):
    root, bob, _ = people
    # bob acts (as a service call, the web layer checks he is an admin): root is the only admin.
    with pytest.raises(ValidationFailed, match="last active admin"):
        admin_service.set_status(bob.id, root.id, "disabled")
    with pytest.raises(ValidationFailed, match="last active admin"):
        admin_service.set_role(bob.id, root.id, "user")
    admin_service.set_role(root.id, bob.id, "admin")
    admin_service.set_role(bob.id, root.id, "user")  # now allowed: bob is an active admin
    rows = {r.username: r.role for r in admin_service.list_users()}
    assert rows == {"root": "user", "bob": "admin", "carol": "user"}


def test_a_disabled_admin_does_not_count_as_the_remaining_admin(admin_service, people):
    root, bob, carol = people
    admin_service.set_role(root.id, bob.id, "admin")
    admin_service.set_status(root.id, bob.id, "disabled")
    with pytest.raises(ValidationFailed):
        admin_service.set_role(carol.id, root.id, "user")


@pytest.mark.parametrize("change", ["status", "role"])
def test_two_admins_disabling_each_other_at_once_leave_one_active_admin(
        admin_service, people, session_factory, monkeypatch, change):
    root, bob, _ = people
    admin_service.set_role(root.id, bob.id, "admin")
    # A pause after the last-admin check lets both pass it unless check and change are
    # serialized (backend.db.lock_for_write).
    check = UserAdminService._keep_an_admin

    def slow_check(db, losing):
        check(db, losing)
        time.sleep(0.3)

    monkeypatch.setattr(UserAdminService, "_keep_an_admin", staticmethod(slow_check))
    if change == "status":
        calls = (lambda: admin_service.set_status(root.id, bob.id, "disabled"),
                 lambda: admin_service.set_status(bob.id, root.id, "disabled"))
    else:
        calls = (lambda: admin_service.set_role(root.id, bob.id, "user"),
                 lambda: admin_service.set_role(bob.id, root.id, "user"))
    results = _run_at_once(*calls)
    assert sorted(type(r).__name__ for r in results) == ["NoneType", "ValidationFailed"], results
    with session_factory() as db:
        active_admins = db.scalar(select(func.count(User.id)).where(User.role == "admin", User.status == "active"))
    assert active_admins == 1

from __future__ import annotations

import hashlib
import threading
import time
from datetime import timedelta

import pytest
from argon2 import PasswordHasher
from sqlalchemy import select, update

from backend.auth import AuthService, UserInfo
from backend.errors import InvalidCredentials, UsernameTaken, ValidationFailed
from backend.models import AuthSession, User, utcnow


class CountingHasher(PasswordHasher):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.verified: list[str] = []

    def verify(self, hash, password):  # noqa: A002 - argon2's own parameter name
        self.verified.append(hash)
        return super().verify(hash, password)


@pytest.fixture
def hasher():
    return CountingHasher(time_cost=1, memory_cost=8, parallelism=1)


@pytest.fixture
def auth(session_factory, hasher):
    return AuthService(session_factory, session_ttl_s=3600, password_hasher=hasher)


def test_sign_up_then_log_in_gives_a_session(auth):
    user = auth.sign_up("alice", "correct horse")
    assert isinstance(user, UserInfo) and user.username == "alice" and len(user.id) == 32
    token = auth.log_in("alice", "correct horse")
    assert auth.user_for_session(token) == user
    assert auth.user_for_session("not-a-token") is None
    assert auth.user_for_session(None) is None


def test_password_is_stored_as_argon2id(auth, session_factory):
    auth.sign_up("alice", "correct horse")
    with session_factory() as db:
        stored = db.scalar(select(User.password_hash))
    assert stored.startswith("$argon2id$") and "correct horse" not in stored


@pytest.mark.parametrize(
    "username", ["ab", "x" * 33, "has space", "-leading", "bad/char", "émile", ""]
)
def test_username_rules(auth, username):
    with pytest.raises(ValidationFailed):
        auth.sign_up(username, "long enough password")


def test_password_min_length(auth):
    with pytest.raises(ValidationFailed, match="at least 8"):
        auth.sign_up("alice", "short")


def test_usernames_are_unique_ignoring_case(auth):
    auth.sign_up("Alice", "password one")
    with pytest.raises(UsernameTaken):
        auth.sign_up("alice", "password two")
    # The account keeps its spelling and logs in by any case.
    token = auth.log_in("ALICE", "password one")
    assert auth.user_for_session(token).username == "Alice"


def test_wrong_password_and_unknown_user_are_the_same_error_and_both_verify(auth, hasher):
    auth.sign_up("alice", "correct horse")
    hasher.verified.clear()
    with pytest.raises(InvalidCredentials) as wrong:
        auth.log_in("alice", "wrong password")
    with pytest.raises(InvalidCredentials) as unknown:
        auth.log_in("bob", "wrong password")
    assert wrong.value.code == unknown.value.code == "invalid_credentials"
    assert str(wrong.value) == str(unknown.value)
    # One argon2 verification each: an unknown user costs the same work as a known one.
    assert len(hasher.verified) == 2


def test_only_the_token_hash_is_stored(auth, session_factory):
    auth.sign_up("alice", "correct horse")
    token = auth.log_in("alice", "correct horse")
    with session_factory() as db:
        stored = db.scalars(select(AuthSession.token_hash)).all()
    assert stored == [hashlib.sha256(token.encode()).hexdigest()]
    assert token not in stored and len(token) >= 40


def test_sessions_expire(auth, session_factory):
    auth.sign_up("alice", "correct horse")
    token = auth.log_in("alice", "correct horse")
    with session_factory() as db:
        expires = db.scalar(select(AuthSession.expires_at))
        assert timedelta(minutes=59) < expires - utcnow() <= timedelta(hours=1)
        db.execute(update(AuthSession).values(expires_at=utcnow() - timedelta(seconds=1)))
        db.commit()
    assert auth.user_for_session(token) is None
    with session_factory() as db:
        assert db.scalars(select(AuthSession)).all() == []


def test_log_out_ends_only_that_session(auth):
    auth.sign_up("alice", "correct horse")
    first = auth.log_in("alice", "correct horse")
    second = auth.log_in("alice", "correct horse")
    auth.log_out(first)
    assert auth.user_for_session(first) is None
    assert auth.user_for_session(second) is not None
    auth.log_out("unknown token")  # ignored


def test_hash_is_upgraded_when_parameters_change(session_factory, hasher):
    AuthService(session_factory, 3600, hasher).sign_up("alice", "correct horse")
    stronger = PasswordHasher(time_cost=2, memory_cost=16, parallelism=1)
    AuthService(session_factory, 3600, stronger).log_in("alice", "correct horse")
    with session_factory() as db:
        stored = db.scalar(select(User.password_hash))
    assert "t=2" in stored and "m=16" in stored
    stronger.verify(stored, "correct horse")


def test_oversized_password_is_rejected_without_leaking(auth):
    auth.sign_up("alice", "correct horse")
    with pytest.raises(InvalidCredentials):
        auth.log_in("alice", "x" * 5000)


# --- roles, statuses, sign-up modes, password change (issue 5) ---------------------------------

from backend.errors import AccountDisabled, AccountPending, NotFound, SignUpClosed  # noqa: E402


def _set_status(session_factory, user_id, status):
    with session_factory() as db:
        db.execute(update(User).where(User.id == user_id).values(status=status))
        db.commit()


def test_first_account_is_admin_whatever_the_mode(auth):
    first = auth.sign_up("root", "correct horse", signup_mode="closed")
    assert (first.role, first.status, first.is_admin) == ("admin", "active", True)
    second = auth.sign_up("alice", "correct horse", signup_mode="open")
    assert (second.role, second.status, second.is_admin) == ("user", "active", False)


def test_approval_mode_makes_pending_users_who_cannot_log_in(auth):
    auth.sign_up("root", "correct horse")
    pending = auth.sign_up("bob", "correct horse", signup_mode="approval")
    assert pending.status == "pending"
    with pytest.raises(AccountPending):
        auth.log_in("bob", "correct horse")
    with pytest.raises(InvalidCredentials):  # wrong password: nothing about the status
        auth.log_in("bob", "wrong password")


def test_closed_mode_refuses_after_the_first_account(auth):
    auth.sign_up("root", "correct horse")
    with pytest.raises(SignUpClosed):
        auth.sign_up("bob", "correct horse", signup_mode="closed")
    with pytest.raises(ValidationFailed):
        auth.sign_up("bob", "correct horse", signup_mode="sometimes")


def test_disabled_users_lose_sessions_lookup_and_log_in(auth, session_factory):
    auth.sign_up("root", "correct horse")
    bob = auth.sign_up("bob", "correct horse")
    token = auth.log_in("bob", "correct horse")
    _set_status(session_factory, bob.id, "disabled")
    assert auth.user_for_session(token) is None
    with pytest.raises(AccountDisabled):
        auth.log_in("bob", "correct horse")
    _set_status(session_factory, bob.id, "active")
    assert auth.user_for_session(token) == bob  # the session row itself was not touched here


def test_create_user_is_active_with_the_given_role(auth):
    auth.sign_up("root", "correct horse")
    admin = auth.create_user("ops", "correct horse", role="admin")
    assert (admin.role, admin.status) == ("admin", "active")
    with pytest.raises(ValidationFailed):
        auth.create_user("x-y-z", "correct horse", role="superuser")
    assert auth.find_user("OPS") == admin and auth.find_user("nobody") is None


def test_change_password_keeps_only_the_given_session(auth):
    alice = auth.sign_up("alice", "correct horse")
    keep, drop = auth.log_in("alice", "correct horse"), auth.log_in("alice", "correct horse")
    with pytest.raises(InvalidCredentials):
        auth.change_password(alice.id, "wrong", "new password!", keep)
    assert auth.user_for_session(drop) is not None  # a failed change ends nothing
    with pytest.raises(ValidationFailed):
        auth.change_password(alice.id, "correct horse", "short", keep)
    auth.change_password(alice.id, "correct horse", "new password!", keep)
    assert auth.user_for_session(keep) == alice and auth.user_for_session(drop) is None
    with pytest.raises(InvalidCredentials):
        auth.log_in("alice", "correct horse")
    assert auth.log_in("alice", "new password!")
    with pytest.raises(NotFound):
        auth.change_password("0" * 32, "x", "new password!", None)


def _run_at_once(*calls):
    """Run each call on its own thread, started together; returns their results or exceptions."""
    barrier = threading.Barrier(len(calls))
    results: list[object] = [None] * len(calls)

    def run(i, call):
        barrier.wait()
        try:
            results[i] = call()
        except Exception as exc:  # the caller inspects it
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results


def test_simultaneous_first_sign_ups_make_exactly_one_admin(auth, session_factory, monkeypatch):
    # A pause after the "no account yet" check lets all three see an empty table unless the
    # check and the insert are serialized (backend.db.lock_for_write).
    check = AuthService._is_first_account

    def slow_check(db):
        first = check(db)
        time.sleep(0.3)
        return first

    monkeypatch.setattr(AuthService, "_is_first_account", staticmethod(slow_check))
    results = _run_at_once(*(lambda n=n: auth.sign_up(f"first{n}", "correct horse") for n in range(3)))
    assert all(isinstance(r, UserInfo) for r in results), results
    with session_factory() as db:
        roles = sorted(db.scalars(select(User.role)).all())
    assert roles == ["admin", "user", "user"]

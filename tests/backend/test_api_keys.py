from __future__ import annotations

import hashlib

import pytest
from sqlalchemy import select, update

from backend.api_keys import LAST_USED_RESOLUTION_S, MAX_KEYS_PER_USER, ApiKeyService
from backend.auth import AuthService
from backend.errors import NotFound, ValidationFailed
from backend.models import ApiKey, User


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def keys(session_factory, clock):
    return ApiKeyService(session_factory, clock=clock)


@pytest.fixture
def users(session_factory, fast_hasher):
    auth = AuthService(session_factory, 3600, password_hasher=fast_hasher)
    return auth.sign_up("alice", "correct horse"), auth.sign_up("bob", "correct horse")


def test_create_returns_the_secret_once_and_stores_only_its_hash(keys, users, session_factory):
    alice, _ = users
    view, secret = keys.create_key(alice.id, "  laptop ")
    assert secret.startswith("crk_") and len(secret) >= 40
    assert view.name == "laptop" and view.prefix == secret[:12]
    assert view.last_used_at is None and view.revoked_at is None
    with session_factory() as db:
        row = db.scalars(select(ApiKey)).one()
    assert row.key_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in (row.key_hash, row.prefix, row.name)
    assert keys.user_for_key(secret) == alice
    assert keys.user_for_key(secret + "x") is None and keys.user_for_key("") is None
    assert keys.user_for_key("not-a-crk-key") is None


def test_two_keys_have_different_secrets(keys, users):
    alice, _ = users
    (_, a), (_, b) = keys.create_key(alice.id, "a"), keys.create_key(alice.id, "b")
    assert a != b


@pytest.mark.parametrize("name", ["", "   ", "x" * 65, "tab\there"])
def test_bad_names(keys, users, name):
    with pytest.raises(ValidationFailed):
        keys.create_key(users[0].id, name)


def test_unknown_user_cannot_get_a_key(keys):
    with pytest.raises(NotFound):
        keys.create_key("0" * 32, "k")


def test_revoke_is_owner_only_and_stops_the_key(keys, users):
    alice, bob = users
    view, secret = keys.create_key(alice.id, "k")
    with pytest.raises(NotFound):
        keys.revoke_key(bob.id, view.id)
    with pytest.raises(NotFound):
        keys.revoke_key(alice.id, "missing")
    assert keys.user_for_key(secret) == alice
    keys.revoke_key(alice.id, view.id)
    keys.revoke_key(alice.id, view.id)  # again: no error
    assert keys.user_for_key(secret) is None
    (listed,) = keys.list_keys(alice.id)
    assert listed.revoked_at is not None
    assert keys.list_keys(bob.id) == []


def test_keys_of_inactive_users_do_not_work(keys, users, session_factory):
    alice, _ = users
    _, secret = keys.create_key(alice.id, "k")
    for status, works in (("disabled", False), ("pending", False), ("active", True)):
        with session_factory() as db:
            db.execute(update(User).where(User.id == alice.id).values(status=status))
            db.commit()
        assert (keys.user_for_key(secret) is not None) is works, status


def test_last_used_is_written_at_most_once_per_resolution(keys, users, clock):
    alice, _ = users
    view, secret = keys.create_key(alice.id, "k")
    keys.user_for_key(secret)
    first = keys.list_keys(alice.id)[0].last_used_at
    assert first is not None and first.timestamp() == clock.now
    clock.now += LAST_USED_RESOLUTION_S - 1
    keys.user_for_key(secret)
    assert keys.list_keys(alice.id)[0].last_used_at == first
    clock.now += 1
    keys.user_for_key(secret)
    assert keys.list_keys(alice.id)[0].last_used_at.timestamp() == clock.now


def test_list_is_newest_first_and_the_number_of_live_keys_is_bounded(keys, users, clock):
    alice, _ = users
    for i in range(MAX_KEYS_PER_USER):
        clock.now += 1
        keys.create_key(alice.id, f"k{i}")
    assert [k.name for k in keys.list_keys(alice.id)][:2] == [f"k{MAX_KEYS_PER_USER - 1}", f"k{MAX_KEYS_PER_USER - 2}"]
    with pytest.raises(ValidationFailed):
        keys.create_key(alice.id, "one too many")
    keys.revoke_key(alice.id, keys.list_keys(alice.id)[0].id)
    keys.create_key(alice.id, "fits again")

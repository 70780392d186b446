"""Named API keys for the HTTP API (`Authorization: Bearer crk_...`).

A secret is ``crk_`` + 43 URL-safe characters (32 random bytes). It is returned once, by
:meth:`ApiKeyService.create_key`; the database keeps only its SHA-256 (hex) and its first
:data:`PREFIX_CHARS` characters, which the owner sees to tell keys apart. A key works while it is
not revoked and its owner is active, so disabling a user stops his keys on the next request.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Callable

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, sessionmaker

from backend.auth import UserInfo
from backend.errors import NotFound, ValidationFailed
from backend.models import ApiKey, User

SECRET_PREFIX = "crk_"
SECRET_BYTES = 32
PREFIX_CHARS = 12  # "crk_" + 8 random characters: enough to tell keys apart, useless to guess
NAME_MAX = 64
MAX_KEYS_PER_USER = 50  # unrevoked keys; bounds what one account can pile up
# last_used_at is written at most this often per key, so a busy key does not write on every call.
LAST_USED_RESOLUTION_S = 60.0


@dataclass(frozen=True)
class ApiKeyView:
    """What the owner sees of a key (never the secret). Times are aware UTC datetimes."""

    id: str
    name: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


def hash_secret(secret: str) -> str:
    """SHA-256 of an API key secret, hex (64 characters): what the database stores."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def validate_key_name(name: str | None) -> str:
    """The key name to store (stripped). Raises ValidationFailed: empty, longer than
    NAME_MAX characters, or holding control characters."""
    cleaned = (name or "").strip()
    if not cleaned:
        raise ValidationFailed("Give the key a name")
    if len(cleaned) > NAME_MAX:
        raise ValidationFailed(f"Key name must be at most {NAME_MAX} characters")
    if any(ord(c) < 32 or ord(c) == 127 for c in cleaned):
        raise ValidationFailed("Key name must not contain control characters")
    return cleaned


def _view(key: ApiKey) -> ApiKeyView:
    return ApiKeyView(key.id, key.name, key.prefix, key.created_at, key.last_used_at, key.revoked_at)


class ApiKeyService:
    """Create, list, revoke and look up API keys.

    Args:
        session_factory: SQLAlchemy sessionmaker.
        clock: seconds since the epoch (tests pass a fake to step over the last-used resolution).
    """

    def __init__(self, session_factory: sessionmaker[Session], clock: Callable[[], float] = time.time) -> None:
        self._sessions = session_factory
        self._clock = clock

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self._clock(), tz=timezone.utc)

    def create_key(self, user_id: str, name: str) -> tuple[ApiKeyView, str]:
        """A new key for `user_id`; returns (its view, the secret). The secret is not stored
        and cannot be shown again.

        Raises:
            ValidationFailed: bad name, or MAX_KEYS_PER_USER unrevoked keys already.
            NotFound: no such user.
        """
        cleaned = validate_key_name(name)
        secret = SECRET_PREFIX + secrets.token_urlsafe(SECRET_BYTES)
        with self._sessions() as db:
            if db.get(User, user_id) is None:
                raise NotFound()
            live = db.scalar(
                select(func.count(ApiKey.id)).where(ApiKey.user_id == user_id, ApiKey.revoked_at.is_(None))
            )
            if (live or 0) >= MAX_KEYS_PER_USER:
                raise ValidationFailed(f"At most {MAX_KEYS_PER_USER} keys; revoke one first")
            key = ApiKey(user_id=user_id, name=cleaned, prefix=secret[:PREFIX_CHARS],
                         key_hash=hash_secret(secret), created_at=self._now())
            db.add(key)
            db.commit()
            return _view(key), secret

    def list_keys(self, user_id: str) -> list[ApiKeyView]:
        """The user's keys, revoked ones included, newest first."""
        with self._sessions() as db:
            keys = db.scalars(
                select(ApiKey).where(ApiKey.user_id == user_id).order_by(ApiKey.created_at.desc(), ApiKey.id)
            ).all()
            return [_view(k) for k in keys]

    def revoke_key(self, user_id: str, key_id: str) -> None:
        """Revoke one of the user's keys (again: no change). Raises NotFound for an unknown
        key or another user's."""
        with self._sessions() as db:
            key = db.get(ApiKey, key_id) if isinstance(key_id, str) and len(key_id) <= 64 else None
            if key is None or key.user_id != user_id:
                raise NotFound()
            if key.revoked_at is None:
                key.revoked_at = self._now()
                db.commit()

    def user_for_key(self, secret: str | None) -> UserInfo | None:
        """The active owner of an unrevoked key, or None. Updates the key's last_used_at when
        it is older than LAST_USED_RESOLUTION_S."""
        if not secret or not secret.startswith(SECRET_PREFIX) or len(secret) > 256:
            return None
        with self._sessions() as db:
            row = db.execute(
                select(ApiKey.id, ApiKey.last_used_at, User.id.label("user_id"), User.username, User.role, User.status)
                .join(User, User.id == ApiKey.user_id)
                .where(ApiKey.key_hash == hash_secret(secret), ApiKey.revoked_at.is_(None))
            ).first()
            if row is None or row.status != "active":
                return None
            now = self._now()
            if row.last_used_at is None or now - row.last_used_at >= timedelta(seconds=LAST_USED_RESOLUTION_S):
                db.execute(update(ApiKey).where(ApiKey.id == row.id).values(last_used_at=now))
                db.commit()
            return UserInfo(id=row.user_id, username=row.username, role=row.role, status=row.status)

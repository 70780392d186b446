"""What an admin does to accounts: list them, approve, disable, re-enable, change roles.

Invariant: at least one active admin exists once there are accounts. A change that would leave
none (disabling, or demoting, the last active admin) raises ValidationFailed, and an admin
cannot change his own status or role (another admin must), so nobody locks himself out. The
check and the change share one transaction under backend.db.lock_for_write, so two admins
disabling each other at once cannot both pass it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timezone

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session, sessionmaker

from backend.auth import ACCOUNTS_LOCK
from backend.db import lock_for_write
from backend.errors import NotFound, ValidationFailed
from backend.models import USER_ROLES, ApiKey, AuthSession, UsageRecord, User, utcnow

# An admin approves (pending -> active), disables and re-enables; nobody is made pending.
SETTABLE_STATUSES = ("active", "disabled")


@dataclass(frozen=True)
class UserRow:
    """One line of the admin's users table.

    tokens_today: prompt + completion tokens since 00:00 UTC; api_keys: unrevoked keys.
    """

    id: str
    username: str
    role: str
    status: str
    created_at: datetime
    tokens_today: int
    api_keys: int


def _start_of_utc_day(now: datetime) -> datetime:
    return datetime.combine(now.astimezone(timezone.utc).date(), time(0), tzinfo=timezone.utc)


class UserAdminService:
    """Account administration (the /admin users table)."""

    def __init__(self, session_factory: sessionmaker[Session]) -> None:
        self._sessions = session_factory

    def list_users(self) -> list[UserRow]:
        """Every account, oldest first (the first admin on top)."""
        since = _start_of_utc_day(utcnow())
        with self._sessions() as db:
            tokens = dict(
                db.execute(
                    select(UsageRecord.user_id, func.sum(UsageRecord.prompt_tokens + UsageRecord.completion_tokens))
                    .where(UsageRecord.created_at >= since)
                    .group_by(UsageRecord.user_id)
                ).all()
            )
            keys = dict(
                db.execute(
                    select(ApiKey.user_id, func.count(ApiKey.id))
                    .where(ApiKey.revoked_at.is_(None))
                    .group_by(ApiKey.user_id)
                ).all()
            )
            users = db.scalars(select(User).order_by(User.created_at, User.username_key)).all()
            return [
                UserRow(u.id, u.username, u.role, u.status, u.created_at,
                        int(tokens.get(u.id) or 0), int(keys.get(u.id) or 0))
                for u in users
            ]

    def set_status(self, actor_id: str, user_id: str, status: str) -> None:
        """Approve or re-enable ("active") or disable ("disabled") an account. Disabling deletes
        its sessions at once (its API keys stop working through the status check).

        Raises:
            ValidationFailed: unknown status, the actor's own account, or the last active admin.
            NotFound: no such user.
        """
        if status not in SETTABLE_STATUSES:
            raise ValidationFailed(f"status must be one of {', '.join(SETTABLE_STATUSES)}, got {status!r}")
        with self._sessions() as db:
            lock_for_write(db, ACCOUNTS_LOCK)
            user = self._target(db, actor_id, user_id, "status")
            if status != "active":
                self._keep_an_admin(db, user)
            user.status = status
            if status != "active":
                db.execute(delete(AuthSession).where(AuthSession.user_id == user.id))
            db.commit()

    def set_role(self, actor_id: str, user_id: str, role: str) -> None:
        """Make an account "admin" or "user".

        Raises:
            ValidationFailed: unknown role, the actor's own account, or the last active admin.
            NotFound: no such user.
        """
        if role not in USER_ROLES:
            raise ValidationFailed(f"role must be one of {', '.join(USER_ROLES)}, got {role!r}")
        with self._sessions() as db:
            lock_for_write(db, ACCOUNTS_LOCK)
            user = self._target(db, actor_id, user_id, "role")
            if role != "admin":
                self._keep_an_admin(db, user)
            user.role = role
            db.commit()

    @staticmethod
    def _target(db: Session, actor_id: str, user_id: str, what: str) -> User:
        user = db.get(User, user_id) if isinstance(user_id, str) and len(user_id) <= 64 else None
        if user is None:
            raise NotFound()
        if user.id == actor_id:
            raise ValidationFailed(f"You cannot change your own {what}; ask another admin")
        return user

    @staticmethod
    def _keep_an_admin(db: Session, losing: User) -> None:
        """Raise ValidationFailed when `losing` is the only active admin."""
        if losing.role != "admin" or losing.status != "active":
            return
        others = db.scalar(
            select(func.count(User.id)).where(User.role == "admin", User.status == "active", User.id != losing.id)
        )
        if not others:
            raise ValidationFailed("This is the last active admin; make another admin first")

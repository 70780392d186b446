"""Accounts and server-side log-in sessions.

Roles: "admin" | "user". Statuses: "active" | "pending" (signed up while the sign-up mode was
"approval", waits for an admin) | "disabled" (by an admin). Only active users have working
sessions: `user_for_session` joins on the user's status, so disabling (or approving) takes effect
on the very next request. The first account ever created is an active admin whatever the mode.

Passwords: argon2id through argon2-cffi's PasswordHasher (RFC 9106 parameters by default),
rehashed on log-in when the parameters change. Sessions: a random token
(`secrets.token_urlsafe`) goes to the browser; only its SHA-256 is stored, so a leaked database
does not yield usable cookies.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import unicodedata
from dataclasses import dataclass
from datetime import timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from backend.db import lock_for_write
from backend.errors import (
    AccountDisabled,
    AccountPending,
    InvalidCredentials,
    NotFound,
    SignUpClosed,
    UsernameTaken,
    ValidationFailed,
)
from backend.models import USER_ROLES, USERNAME_MAX, AuthSession, User, utcnow

USERNAME_MIN = 3
USERNAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
PASSWORD_MIN = 8
# Bounds the work one log-in attempt can cost the server.
PASSWORD_MAX = 1024
TOKEN_BYTES = 32
SIGNUP_MODES = ("open", "approval", "closed")
# lock_for_write's name for transactions that read and change who the admins are.
ACCOUNTS_LOCK = "crescent.accounts"


@dataclass(frozen=True)
class UserInfo:
    """Who is calling. role: "admin" | "user"; status: "active" | "pending" | "disabled";
    theme: one of THEMES (the pages' colour scheme)."""

    id: str
    username: str
    role: str = "user"
    status: str = "active"
    theme: str = "system"

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    @property
    def is_active(self) -> bool:
        return self.status == "active"


def user_info(user: User) -> UserInfo:
    return UserInfo(id=user.id, username=user.username, role=user.role, status=user.status,
                    theme=user.theme or "system")


# "system" follows the browser's prefers-color-scheme; the others force one.
THEMES = ("system", "light", "dark")


def username_key(username: str | None) -> str:
    """The case-folded lookup key of a username ("Alice " -> "alice"); "" for None."""
    return unicodedata.normalize("NFC", username or "").strip().casefold()


def hash_token(token: str) -> str:
    """SHA-256 of a session token, hex (64 characters): what the database stores."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def validate_username(username: str) -> str:
    """The username to store (NFC-normalized, stripped).

    Rules: 3-32 characters, ASCII letters, digits, '_', '.', '-', starting with a letter or digit.

    Raises:
        ValidationFailed: the username breaks a rule (the message says which).
    """
    name = unicodedata.normalize("NFC", username or "").strip()
    if not USERNAME_MIN <= len(name) <= USERNAME_MAX:
        raise ValidationFailed(f"Username must be {USERNAME_MIN} to {USERNAME_MAX} characters")
    if not USERNAME_RE.fullmatch(name):
        raise ValidationFailed(
            "Username may hold only letters, digits, '_', '.' and '-', and must start with a letter or digit"
        )
    return name


def validate_password(password: str) -> None:
    """Raises ValidationFailed unless PASSWORD_MIN <= len(password) <= PASSWORD_MAX."""
    if len(password or "") < PASSWORD_MIN:
        raise ValidationFailed(f"Password must be at least {PASSWORD_MIN} characters")
    if len(password) > PASSWORD_MAX:
        raise ValidationFailed(f"Password must be at most {PASSWORD_MAX} characters")


class AuthService:
    """Sign-up, log-in, log-out and session lookup.

    Args:
        session_factory: SQLAlchemy sessionmaker.
        session_ttl_s: lifetime of a log-in session in seconds.
        password_hasher: argon2 PasswordHasher (tests pass cheaper parameters).
    """

    def __init__(
        self,
        session_factory: sessionmaker[Session],
        session_ttl_s: int,
        password_hasher: PasswordHasher | None = None,
    ) -> None:
        if session_ttl_s <= 0:
            raise ValueError(f"session_ttl_s must be positive, got {session_ttl_s}")
        self._sessions = session_factory
        self._ttl = timedelta(seconds=session_ttl_s)
        self._hasher = password_hasher or PasswordHasher()
        self._dummy_hash: str | None = None

    def sign_up(self, username: str, password: str, signup_mode: str = "open") -> UserInfo:
        """Create an account through the sign-up form.

        The first account ever is an active admin whatever `signup_mode`; after it, "open" makes
        an active user, "approval" a pending one, and "closed" refuses.

        Raises:
            SignUpClosed: mode "closed" and accounts already exist.
            ValidationFailed: a bad username or password, or an unknown mode.
            UsernameTaken: the name (ignoring case) exists.
        """
        if signup_mode not in SIGNUP_MODES:
            raise ValidationFailed(f"signup_mode must be one of {', '.join(SIGNUP_MODES)}, got {signup_mode!r}")
        if signup_mode == "closed" and self.has_users():
            raise SignUpClosed()
        name = validate_username(username)
        validate_password(password)
        status = "pending" if signup_mode == "approval" else "active"
        return self._insert(name, password, role="user", status=status, first_is_admin=True)

    def create_user(self, username: str, password: str, role: str = "user") -> UserInfo:
        """Create an active account with `role` (the admin CLI; ignores the sign-up mode).

        Raises ValidationFailed (bad name, password or role), UsernameTaken.
        """
        if role not in USER_ROLES:
            raise ValidationFailed(f"role must be one of {', '.join(USER_ROLES)}, got {role!r}")
        name = validate_username(username)
        validate_password(password)
        return self._insert(name, password, role=role, status="active", first_is_admin=True)

    def has_users(self) -> bool:
        """Whether any account exists (before the first, sign-up is open to create the admin)."""
        with self._sessions() as db:
            return db.scalar(select(User.id).limit(1)) is not None

    def find_user(self, username: str) -> UserInfo | None:
        """The account named `username` (any case), or None."""
        key = username_key(username)
        if not key:
            return None
        with self._sessions() as db:
            user = db.scalar(select(User).where(User.username_key == key))
            return None if user is None else user_info(user)

    def _insert(self, name: str, password: str, role: str, status: str, first_is_admin: bool) -> UserInfo:
        password_hash = self._hasher.hash(password)
        with self._sessions() as db:
            # The emptiness check and the insert share one locked transaction: of several first
            # sign-ups at once, only one finds the table empty.
            lock_for_write(db, ACCOUNTS_LOCK)
            if first_is_admin and self._is_first_account(db):
                role, status = "admin", "active"
            user = User(username=name, username_key=name.casefold(), password_hash=password_hash,
                        role=role, status=status)
            db.add(user)
            try:
                db.commit()
            except IntegrityError:
                raise UsernameTaken() from None
            return user_info(user)

    @staticmethod
    def _is_first_account(db: Session) -> bool:
        return db.scalar(select(User.id).limit(1)) is None

    def log_in(self, username: str, password: str) -> str:
        """Check the password and open a session; returns its token (for the cookie).

        Raises:
            InvalidCredentials: unknown user or wrong password (indistinguishable, including in
                time: an unknown user still costs one hash verification).
            AccountPending, AccountDisabled: the password is right but the account may not log
                in (checked only after the password, so they reveal nothing without it).
        """
        key = username_key(username)
        with self._sessions() as db:
            user = db.scalar(select(User).where(User.username_key == key)) if key else None
            if user is None or not password or len(password) > PASSWORD_MAX:
                self._verify_dummy(password)
                raise InvalidCredentials()
            try:
                self._hasher.verify(user.password_hash, password)
            except (VerifyMismatchError, VerificationError, InvalidHashError):
                raise InvalidCredentials() from None
            if user.status == "pending":
                raise AccountPending()
            if user.status != "active":
                raise AccountDisabled()
            if self._hasher.check_needs_rehash(user.password_hash):
                user.password_hash = self._hasher.hash(password)
            token = secrets.token_urlsafe(TOKEN_BYTES)
            db.add(AuthSession(user_id=user.id, token_hash=hash_token(token), expires_at=utcnow() + self._ttl))
            db.commit()
            return token

    def user_for_session(self, token: str | None) -> UserInfo | None:
        """The user of a live session token; None for no, unknown or expired token, and for a
        user who is not active (pending or disabled)."""
        if not token or len(token) > 256:
            return None
        token_hash = hash_token(token)
        with self._sessions() as db:
            row = db.execute(
                select(User.id, User.username, User.role, User.status, User.theme, AuthSession.expires_at)
                .join(AuthSession, AuthSession.user_id == User.id)
                .where(AuthSession.token_hash == token_hash)
            ).first()
            if row is None:
                return None
            if row.expires_at <= utcnow():
                db.execute(delete(AuthSession).where(AuthSession.token_hash == token_hash))
                db.commit()
                return None
            if row.status != "active":
                return None
            return UserInfo(id=row.id, username=row.username, role=row.role, status=row.status,
                            theme=row.theme or "system")

    def set_theme(self, user_id: str, theme: str) -> str:
        """Remember the user's colour scheme (one of THEMES); returns it.

        Raises:
            ValidationFailed: `theme` is not one of THEMES.
            NotFound: no such user.
        """
        if theme not in THEMES:
            raise ValidationFailed(f"theme must be one of {', '.join(THEMES)}")
        with self._sessions() as db:
            user = db.get(User, user_id)
            if user is None:
                raise NotFound()
            user.theme = theme
            db.commit()
        return theme

    def change_password(self, user_id: str, current: str, new: str, keep_token: str | None = None) -> None:
        """Replace the password and end every session of the user except `keep_token`'s.

        Raises:
            InvalidCredentials: `current` is wrong.
            ValidationFailed: `new` breaks the password rules.
            NotFound: no such user.
        """
        validate_password(new)
        with self._sessions() as db:
            user = db.get(User, user_id)
            if user is None:
                raise NotFound()
            if not current or len(current) > PASSWORD_MAX:
                raise InvalidCredentials("the current password is wrong")
            try:
                self._hasher.verify(user.password_hash, current)
            except (VerifyMismatchError, VerificationError, InvalidHashError):
                raise InvalidCredentials("the current password is wrong") from None
            user.password_hash = self._hasher.hash(new)
            query = delete(AuthSession).where(AuthSession.user_id == user_id)
            if keep_token:
                query = query.where(AuthSession.token_hash != hash_token(keep_token))
            db.execute(query)
            db.commit()

    def end_sessions(self, user_id: str) -> int:
        """Delete every session of `user_id`; returns how many ended."""
        with self._sessions() as db:
            result = db.execute(delete(AuthSession).where(AuthSession.user_id == user_id))
            db.commit()
            return int(result.rowcount or 0)

    def log_out(self, token: str) -> None:
        """End the session of `token`; unknown tokens are ignored."""
        if not token:
            return
        with self._sessions() as db:
            db.execute(delete(AuthSession).where(AuthSession.token_hash == hash_token(token)))
            db.commit()

    def _verify_dummy(self, password: str | None) -> None:
        if self._dummy_hash is None:
            self._dummy_hash = self._hasher.hash(secrets.token_urlsafe(16))
        try:
            self._hasher.verify(self._dummy_hash, (password or "")[:PASSWORD_MAX])
        except VerificationError:
            pass

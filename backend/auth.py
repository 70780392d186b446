"""Accounts and server-side log-in sessions.

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

from backend.errors import InvalidCredentials, UsernameTaken, ValidationFailed
from backend.models import USERNAME_MAX, AuthSession, User, utcnow

USERNAME_MIN = 3
USERNAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
PASSWORD_MIN = 8
# Bounds the work one log-in attempt can cost the server.
PASSWORD_MAX = 1024
TOKEN_BYTES = 32


@dataclass(frozen=True)
class UserInfo:
    id: str
    username: str


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

    def sign_up(self, username: str, password: str) -> UserInfo:
        """Create an account. Raises ValidationFailed, UsernameTaken."""
        name = validate_username(username)
        validate_password(password)
        user = User(username=name, username_key=name.casefold(), password_hash=self._hasher.hash(password))
        with self._sessions() as db:
            db.add(user)
            try:
                db.commit()
            except IntegrityError:
                raise UsernameTaken() from None
            return UserInfo(id=user.id, username=user.username)

    def log_in(self, username: str, password: str) -> str:
        """Check the password and open a session; returns its token (for the cookie).

        Raises:
            InvalidCredentials: unknown user or wrong password (indistinguishable, including in
                time: an unknown user still costs one hash verification).
        """
        key = unicodedata.normalize("NFC", username or "").strip().casefold()
        with self._sessions() as db:
            user = db.scalar(select(User).where(User.username_key == key)) if key else None
            if user is None or not password or len(password) > PASSWORD_MAX:
                self._verify_dummy(password)
                raise InvalidCredentials()
            try:
                self._hasher.verify(user.password_hash, password)
            except (VerifyMismatchError, VerificationError, InvalidHashError):
                raise InvalidCredentials() from None
            if self._hasher.check_needs_rehash(user.password_hash):
                user.password_hash = self._hasher.hash(password)
            token = secrets.token_urlsafe(TOKEN_BYTES)
            db.add(AuthSession(user_id=user.id, token_hash=hash_token(token), expires_at=utcnow() + self._ttl))
            db.commit()
            return token

    def user_for_session(self, token: str | None) -> UserInfo | None:
        """The user of a live session token; None for no, unknown or expired token."""
        if not token or len(token) > 256:
            return None
        token_hash = hash_token(token)
        with self._sessions() as db:
            row = db.execute(
                select(User.id, User.username, AuthSession.expires_at)
                .join(AuthSession, AuthSession.user_id == User.id)
                .where(AuthSession.token_hash == token_hash)
            ).first()
            if row is None:
                return None
            if row.expires_at <= utcnow():
                db.execute(delete(AuthSession).where(AuthSession.token_hash == token_hash))
                db.commit()
                return None
            return UserInfo(id=row.id, username=row.username)

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

"""Domain errors with stable codes. Only `web/` maps them to HTTP statuses and close codes."""

from __future__ import annotations


class DomainError(Exception):
    """Base of the errors the services raise on purpose.

    Attributes:
        code: stable machine-readable code (sent to clients as is).
        message: human-readable text, safe to show to the user.
    """

    code = "domain_error"
    default_message = "request failed"

    def __init__(self, message: str | None = None) -> None:
        self.message = message or self.default_message
        super().__init__(self.message)


class NotFound(DomainError):
    """The object does not exist, or belongs to another user (the two are indistinguishable)."""

    code = "not_found"
    default_message = "not found"


class UsernameTaken(DomainError):
    code = "username_taken"
    default_message = "this username is taken"


class InvalidCredentials(DomainError):
    """Log-in failed; never says whether the account exists."""

    code = "invalid_credentials"
    default_message = "wrong username or password"


class ValidationFailed(DomainError):
    code = "invalid_input"
    default_message = "invalid input"


class ConversationBusy(DomainError):
    """A reply is already streaming in this conversation."""

    code = "busy"
    default_message = "a reply is already being generated in this conversation"


class SignUpClosed(DomainError):
    """Sign-up mode is "closed": only an admin (or the CLI) creates accounts."""

    code = "signup_closed"
    default_message = "sign-up is closed; ask an administrator for an account"


class AccountPending(DomainError):
    """The account waits for an admin's approval. Raised only after a correct password, so it
    reveals nothing to someone who does not know it."""

    code = "account_pending"
    default_message = "your account is waiting for an administrator's approval"


class AccountDisabled(DomainError):
    """An admin disabled the account. Raised only after a correct password."""

    code = "account_disabled"
    default_message = "this account has been disabled by an administrator"


class Throttled(DomainError):
    """Too many log-in or sign-up attempts from this address or for this account name.

    Attributes:
        retry_after_s: whole seconds (>= 1) until the next attempt can succeed.
    """

    code = "throttled"
    default_message = "too many attempts"

    def __init__(self, retry_after_s: int, message: str | None = None) -> None:
        self.retry_after_s = max(1, int(retry_after_s))
        super().__init__(message or f"Too many attempts. Try again in {self.retry_after_s} seconds.")

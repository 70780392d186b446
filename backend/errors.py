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

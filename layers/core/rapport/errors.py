"""Domain exceptions. Adapters raise these (`raise … from exc`); the API maps them to status codes in one place."""

from __future__ import annotations


class RapportError(Exception):
    """Base of every error the core raises on purpose."""


class NotFoundError(RapportError):
    """The thing does not exist for this tenant and end user (another tenant's id is indistinguishable from none)."""


class InvalidInputError(RapportError):
    """The request is well-formed JSON but asks for something the rules refuse; the message says what to fix."""


class ConflictError(RapportError):
    """The write conflicts with the current state (a concurrent change, a duplicate that must not merge)."""


class IdempotencyKeyReusedError(RapportError):
    """An Idempotency-Key already used for a request with another body: a new request needs a new key."""


class RequestInProgressError(ConflictError):
    """The first request with this Idempotency-Key is still being answered; the client may retry after a moment."""

    def __init__(self, message: str, *, retry_after_seconds: int) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds


class UnauthorizedError(RapportError):
    """No credentials, or credentials that map to no tenant."""


class ForbiddenError(RapportError):
    """The key is known, but lacks a scope the operation needs; `details` names the operation and the scopes."""

    def __init__(self, message: str, *, details: dict[str, object]) -> None:
        super().__init__(message)
        self.details = details


class RateLimitedError(RapportError):
    """The tenant sent more requests than its limit allows in the current window; retry after the given seconds."""

    def __init__(self, message: str, *, retry_after_seconds: int) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds


class StorageError(RapportError):
    """The store or index failed in a way the caller cannot fix; retrying may help."""


class UpstreamError(RapportError):
    """An outside service (embeddings, LLM) failed after bounded retries."""


class InvalidModelOutputError(UpstreamError):
    """The language model answered, but its answer did not validate against the expected structure."""


class TenantFenceError(RapportError):
    """A request named another tenant's data than the one the work acts for: a bug in our code, never the caller's.
    Refused before anything is sent, answered as an internal error and logged."""


class ErasedContentError(StorageError):
    """A value sealed with a person's data key that no longer exists (the person was erased) or that does not open
    with it (tampered, or copied from another person): the content cannot be read, by design."""

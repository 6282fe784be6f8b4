"""Python client for Rapport's HTTP API: `Rapport` (blocking) and `AsyncRapport` (asyncio)."""

from rapport_client._retry import RetryPolicy
from rapport_client._version import __version__
from rapport_client.client import AsyncRapport, Rapport
from rapport_client.errors import (
    Conflict,
    Forbidden,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    RapportConnectionError,
    RapportError,
    RateLimited,
    ServerError,
    Unauthorized,
    UnprocessableEntity,
)

__all__ = [
    "AsyncRapport",
    "Conflict",
    "Forbidden",
    "InvalidRequest",
    "NotFound",
    "PayloadTooLarge",
    "Rapport",
    "RapportConnectionError",
    "RapportError",
    "RateLimited",
    "RetryPolicy",
    "ServerError",
    "Unauthorized",
    "UnprocessableEntity",
    "__version__",
]

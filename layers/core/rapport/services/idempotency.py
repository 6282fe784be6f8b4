"""Keyed requests answered once: every write route's one idempotency scheme, on Powertools Idempotency.

A keyed request runs in two Powertools-guarded steps, both keyed by a hash of (tenant, user, route, key) and both
checking that the request is the one first sent with the key:

1. **name**: the id of what the request will write (an interaction, a memory) is fixed once, from the moment of
   the first attempt and a hash of the key (`rapport.ids.keyed_id`), and kept as that step's answer. Every retry,
   whatever happened to the first one, writes under the same id, and the item sorts by when it was first sent.
2. **write**: the use case runs under that id; its answer (ids and statuses, never end users' words) is kept as the
   step's answer, and a retry gets it back marked replayed. While a first attempt is still running, a duplicate gets
   RequestInProgressError; an attempt that crashed stops blocking its key at its deadline (the Lambda function's
   remaining time, registered with Powertools, or `idempotency_in_progress_seconds` locally). The use cases find
   what a crashed attempt already wrote by its id, so a retry after a half-done write completes it instead of
   writing it twice.

The same key with another body is IdempotencyKeyReusedError (422). Records expire after
`idempotency_expiry_hours`; a key sent again after that is a new request.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol, cast

from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, IdempotentHookFunction, idempotent_function
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyInconsistentStateError,
    IdempotencyPersistenceLayerError,
    IdempotencyValidationError,
)

from rapport.clock import Clock
from rapport.errors import (
    IdempotencyKeyReusedError,
    InvalidInputError,
    RapportError,
    RequestInProgressError,
    StorageError,
)
from rapport.ids import keyed_id
from rapport.ports.idempotency import IdempotencyRecords
from rapport.ports.items import ItemScope
from rapport.settings import Settings

MAX_KEY_CHARS = 255
IDEMPOTENCY_HEADER = "Idempotency-Key"


class RemainingTime(Protocol):
    """What Powertools reads of a Lambda context: how long the current call may still run."""

    def get_remaining_time_in_millis(self) -> int: ...


@dataclass(frozen=True)
class LocalDeadline:
    """The in-progress deadline outside Lambda: a process has no invocation timeout, so one is set."""

    seconds: float

    def get_remaining_time_in_millis(self) -> int:
        return int(self.seconds * 1000)


@dataclass(frozen=True)
class KeyedRequest:
    """A client's key for one request to one route, and what the request asked (compared on every retry)."""

    route: str
    key: str
    request: Any  # JSON-serialisable: the body as parsed, and whatever else changes what the request does

    def __post_init__(self) -> None:
        if not self.key.strip() or len(self.key) > MAX_KEY_CHARS:
            raise InvalidInputError(f"{IDEMPOTENCY_HEADER} must hold 1 to {MAX_KEY_CHARS} characters")


@dataclass(frozen=True)
class Once:
    """What a keyed request answered: `value` as its write step answered it the first time, `replayed` when this
    is a retry that got the kept answer instead of running again."""

    id: str
    value: dict[str, Any]
    replayed: bool


def fingerprint(request: Any) -> str:
    """What is kept of a request to compare retries with: a hash, never the request itself (it holds end users'
    words, and the record outlives nothing but its expiry)."""
    return hashlib.sha256(json.dumps(request, sort_keys=True, separators=(",", ":"), default=str).encode()).hexdigest()


class IdempotentRequests:
    def __init__(self, records: IdempotencyRecords, settings: Settings, clock: Clock) -> None:
        self._records = records
        self._settings = settings
        self._clock = clock

    def run(
        self,
        scope: ItemScope,
        keyed: KeyedRequest,
        write: Callable[[str], dict[str, Any]],
        *,
        deadline: RemainingTime | None = None,
        expires_after: timedelta | None = None,
    ) -> Once:
        """`write(id)` once for this key in `scope`; `deadline` is the Lambda context when there is one;
        `expires_after` how long the key is remembered (`idempotency_expiry_hours` unless a route needs longer)."""
        expiry = expires_after or timedelta(hours=self._settings.idempotency_expiry_hours)
        data = {
            "key": [scope.tenant_id, scope.user_id or "", keyed.route, keyed.key],
            "request": fingerprint(keyed.request),
        }
        named, _ = self._guarded(scope, f"{keyed.route}.id", data, deadline, expiry, lambda: self._name(scope, keyed))
        item_id = str(named["id"])
        failed: list[Exception] = []

        def attempt() -> dict[str, Any]:
            try:
                return write(item_id)
            except Exception as exc:
                failed.append(exc)
                raise

        try:
            value, replayed = self._guarded(scope, keyed.route, data, deadline, expiry, attempt)
        except Exception:
            if failed:
                # The write failed and took its writes back, so nothing holds the name: the key is free again,
                # for this body or a corrected one. (An attempt that dies instead keeps it, for its retry.)
                self._forget(scope, f"{keyed.route}.id", data, expiry, failed[0])
            raise
        return Once(id=item_id, value=value, replayed=replayed)

    def _forget(self, scope: ItemScope, prefix: str, data: dict[str, Any], expiry: timedelta, exc: Exception) -> None:
        layer = self._records.persistence_for(scope)
        layer.configure(self._config(expiry, lambda response, _: response), key_prefix=prefix)
        try:
            layer.delete_record(data=data, exception=exc)
        except Exception as cause:
            raise StorageError(f"idempotency record unavailable: {type(cause).__name__}") from cause

    def _config(self, expiry: timedelta, hook: Callable[[Any, Any], Any]) -> IdempotencyConfig:
        return IdempotencyConfig(
            event_key_jmespath="key",
            payload_validation_jmespath="request",
            raise_on_no_idempotency_key=True,
            expires_after_seconds=int(expiry.total_seconds()),
            hash_function="sha256",
            response_hook=cast("IdempotentHookFunction", hook),
        )

    def _name(self, scope: ItemScope, keyed: KeyedRequest) -> dict[str, Any]:
        first_sent: datetime = self._clock.now()
        return {"id": keyed_id(first_sent, scope.tenant_id, scope.user_id or "", keyed.route, keyed.key)}

    def _guarded(
        self,
        scope: ItemScope,
        prefix: str,
        data: dict[str, Any],
        deadline: RemainingTime | None,
        expiry: timedelta,
        call: Callable[[], dict[str, Any]],
    ) -> tuple[dict[str, Any], bool]:
        replayed: list[bool] = []

        def mark_replayed(response: Any, _: Any) -> Any:
            replayed.append(True)
            return response

        # A config and a layer per call: Powertools keeps the call's context and key prefix on both.
        config = self._config(expiry, mark_replayed)
        config.register_lambda_context(deadline or LocalDeadline(self._settings.idempotency_in_progress_seconds))  # type: ignore[arg-type]

        @idempotent_function(
            data_keyword_argument="data",
            persistence_store=self._records.persistence_for(scope),
            config=config,
            key_prefix=prefix,
        )
        def guarded(*, data: dict[str, Any]) -> dict[str, Any]:
            return call()

        try:
            value = guarded(data=data)
        except IdempotencyValidationError as exc:
            raise IdempotencyKeyReusedError(
                f"this {IDEMPOTENCY_HEADER} was used for a different request; send a new key for a new request"
            ) from exc
        except IdempotencyAlreadyInProgressError as exc:
            raise RequestInProgressError(
                f"the first request with this {IDEMPOTENCY_HEADER} is still in progress; retry in a moment",
                retry_after_seconds=self._settings.idempotency_retry_after_seconds,
            ) from exc
        except IdempotencyPersistenceLayerError as exc:
            cause = exc.__cause__
            if isinstance(cause, RapportError):
                raise cause from exc
            raise StorageError(f"idempotency record unavailable: {type(cause).__name__}") from exc
        except IdempotencyInconsistentStateError as exc:
            raise StorageError("idempotency record changed while it was read; retry") from exc
        return dict(value), bool(replayed)

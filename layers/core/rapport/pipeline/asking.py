"""Asking the language model for a structured answer: one retry on invalid output, then the rule-based stand-in."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from pydantic import BaseModel

from rapport.errors import InvalidModelOutputError
from rapport.ports.language_model import LanguageModel

ResponseT = TypeVar("ResponseT", bound=BaseModel)

logger = logging.getLogger(__name__)

# An answer that fails validation is asked for once more (sampling may well fix it); a second failure says the
# model cannot do this prompt right now, and the rules answer instead.
ATTEMPTS = 2


@dataclass(frozen=True)
class Answer(Generic[ResponseT]):
    value: ResponseT
    model: str  # the model that answered
    fallback_reason: str | None  # set when the fallback answered, saying why


def ask(
    model: LanguageModel,
    fallback: LanguageModel | None,
    *,
    system: str,
    user: str,
    response_model: type[ResponseT],
    check: Callable[[ResponseT], None] | None = None,
) -> Answer[ResponseT]:
    """`check` adds rules the schema cannot state (one verdict per candidate…); it raises InvalidModelOutputError.
    UpstreamError (throttling, outage after the adapter's retries) is not caught: the orchestrator retries it."""
    failure: InvalidModelOutputError | None = None
    for _ in range(ATTEMPTS):
        try:
            value = model.structured(system=system, user=user, response_model=response_model)
            if check is not None:
                check(value)
            return Answer(value, model.name, None)
        except InvalidModelOutputError as exc:
            failure = exc
    assert failure is not None
    if fallback is None:
        raise failure
    logger.warning("falling back to %s for %s: %s", fallback.name, response_model.__name__, failure)
    value = fallback.structured(system=system, user=user, response_model=response_model)
    if check is not None:
        check(value)
    reason = f"{model.name} answered {ATTEMPTS} times with output that did not validate ({failure})"
    return Answer(value, fallback.name, reason[:300])

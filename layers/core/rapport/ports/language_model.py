"""Port `LanguageModel`: structured extraction and free-text replies, from OpenAI or from the rule-based default."""

from __future__ import annotations

from typing import Protocol, TypeVar

from pydantic import BaseModel

from rapport.domain.models import Message

ResponseT = TypeVar("ResponseT", bound=BaseModel)


class LanguageModel(Protocol):
    @property
    def name(self) -> str:
        """Identifies the model (e.g. 'openai:gpt-4o-mini', 'rules'), recorded with what it produced."""

    def structured(self, *, system: str, user: str, response_model: type[ResponseT]) -> ResponseT:
        """One completion parsed into the pydantic model; raises UpstreamError after bounded retries, or
        InvalidModelOutputError when the answer does not validate (the caller may fall back to rules)."""

    def reply(self, *, system: str, messages: list[Message]) -> str | None:
        """A free-text assistant reply; None when this model cannot write replies (the rule-based default)."""

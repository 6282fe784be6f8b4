"""`RulesLanguageModel`: the `LanguageModel` port answered by rules, for running with no network and no key."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, cast

from pydantic import BaseModel

from rapport.domain.models import Message
from rapport.domain.prompts import payload
from rapport.domain.prompts.constructive_filter import FilterInput, FilterJudgement
from rapport.domain.prompts.conversation import ConversationInput
from rapport.domain.prompts.extract_relational import RelationalExtraction
from rapport.domain.prompts.extract_user import UserExtraction
from rapport.domain.rules.filter_rules import judge
from rapport.domain.rules.relational_rules import extract_relational
from rapport.domain.rules.user_rules import extract_user
from rapport.domain.semantics.matcher import SemanticLayer
from rapport.errors import InvalidInputError, InvalidModelOutputError

ResponseT = TypeVar("ResponseT", bound=BaseModel)
# A handler reads the prompt's user message (its <input> block) and answers with the response model.
Handler = Callable[[str], BaseModel]


class RulesLanguageModel:
    """Answers the prompts it has rules for, chosen by response model; reads their input back from the prompt.

    `semantics`: the semantic layer beside the patterns (docs/pipeline.md); None runs the patterns alone, as with
    an embedder the layer has no calibration for."""

    def __init__(self, max_memories: int = 20, semantics: SemanticLayer | None = None) -> None:
        self.semantics = semantics
        self._handlers: dict[type[BaseModel], Handler] = {
            UserExtraction: lambda text: extract_user(payload.read(text, ConversationInput), max_memories, semantics),
            RelationalExtraction: lambda text: extract_relational(
                payload.read(text, ConversationInput), max_memories, semantics
            ),
            FilterJudgement: lambda text: judge(payload.read(text, FilterInput), semantics),
        }

    @property
    def name(self) -> str:
        return "rules"

    def register(self, response_model: type[BaseModel], handler: Handler) -> None:
        """Teach the model another prompt (a feature with its own response model brings its own rules)."""
        self._handlers[response_model] = handler

    def structured(self, *, system: str, user: str, response_model: type[ResponseT]) -> ResponseT:
        handler = self._handlers.get(response_model)
        if handler is None:
            raise InvalidModelOutputError(f"the rule-based model has no rules for {response_model.__name__}")
        try:
            answer = handler(user)
        except InvalidInputError as exc:
            raise InvalidModelOutputError(f"the rule-based model could not read the prompt: {exc}") from exc
        if not isinstance(answer, response_model):
            raise InvalidModelOutputError(f"rules for {response_model.__name__} answered {type(answer).__name__}")
        return cast(ResponseT, answer)

    def reply(self, *, system: str, messages: list[Message]) -> str | None:
        return None  # rules do not write conversation; the caller uses its own model for replies

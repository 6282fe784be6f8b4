"""How a prompt carries its input: instructions, then the input as JSON between tags that any model can read back."""

from __future__ import annotations

import re
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from rapport.errors import InvalidInputError

InputT = TypeVar("InputT", bound=BaseModel)

_OPEN, _CLOSE = "<input>", "</input>"
_PAYLOAD = re.compile(re.escape(_OPEN) + r"\n(.*)\n" + re.escape(_CLOSE), re.DOTALL)


def render(task: str, payload: BaseModel) -> str:
    """The user message of a prompt. JSON rather than prose, so message boundaries and roles cannot be blurred by
    what the end user wrote (a message that says 'assistant:' stays inside its own string)."""
    return f"{task.strip()}\n\n{_OPEN}\n{payload.model_dump_json()}\n{_CLOSE}"


def read(user_message: str, model: type[InputT]) -> InputT:
    """The input a prompt was rendered from (the rule-based model reads it back instead of reading prose)."""
    match = _PAYLOAD.search(user_message)
    if match is None:
        raise InvalidInputError(f"the prompt carries no {_OPEN} block")
    try:
        return model.model_validate_json(match.group(1))
    except ValidationError as exc:
        raise InvalidInputError(f"the prompt's input is not a {model.__name__}: {exc.error_count()} errors") from exc

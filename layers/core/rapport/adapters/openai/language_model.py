"""The OpenAI `LanguageModel`: chat completions with structured outputs parsed into the prompt's pydantic model."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

import openai
from pydantic import BaseModel, ValidationError

from rapport.adapters.openai.retry import RetryPolicy, call_with_retries
from rapport.domain.models import Message, MessageRole
from rapport.errors import InvalidModelOutputError, UpstreamError

ResponseT = TypeVar("ResponseT", bound=BaseModel)


class OpenAiLanguageModel:
    """Any OpenAI-compatible server works (the client's base URL comes from OPENAI_BASE_URL via the settings).

    The client must be built with `max_retries=0`: this adapter owns the retry policy.
    """

    def __init__(
        self,
        client: openai.OpenAI,
        model: str = "gpt-4o-mini",
        *,
        temperature: float = 0.0,
        max_output_tokens: int = 2_000,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._client = client
        self._model = model
        self._temperature = temperature
        self._max_output_tokens = max_output_tokens
        self._retry = retry or RetryPolicy()
        self._sleep = sleep

    @property
    def name(self) -> str:
        return f"openai:{self._model}"

    def structured(self, *, system: str, user: str, response_model: type[ResponseT]) -> ResponseT:
        def parse() -> Any:
            return self._client.chat.completions.parse(
                model=self._model,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                response_format=response_model,
                temperature=self._temperature,
                max_completion_tokens=self._max_output_tokens,
            )

        try:
            completion = call_with_retries(parse, what="chat", policy=self._retry, sleep=self._sleep)
        except ValidationError as exc:
            # The SDK validates the JSON against the model: malformed JSON and wrong shapes both land here.
            raise InvalidModelOutputError(
                f"the model's answer is not a valid {response_model.__name__} ({exc.error_count()} errors)"
            ) from exc
        except openai.LengthFinishReasonError as exc:
            raise InvalidModelOutputError("the model's answer was cut off at the token limit") from exc
        except openai.ContentFilterFinishReasonError as exc:
            raise InvalidModelOutputError("the model's answer was withheld by its content filter") from exc
        except openai.OpenAIError as exc:
            raise UpstreamError(f"OpenAI chat request failed: {type(exc).__name__}") from exc
        if not completion.choices:
            raise InvalidModelOutputError("the model returned no choices")
        message = completion.choices[0].message
        if message.refusal:
            raise InvalidModelOutputError(f"the model refused to answer: {message.refusal[:200]}")
        parsed = message.parsed
        if not isinstance(parsed, response_model):
            raise InvalidModelOutputError(f"the model returned no {response_model.__name__}")
        return parsed

    def reply(self, *, system: str, messages: list[Message]) -> str | None:
        chat: list[dict[str, str]] = [{"role": "system", "content": system}]
        chat += [{"role": m.role.value, "content": m.content} for m in messages if m.role is not MessageRole.SYSTEM]

        def create() -> Any:
            return self._client.chat.completions.create(
                model=self._model,
                messages=chat,  # type: ignore[arg-type]
                temperature=self._temperature,
                max_completion_tokens=self._max_output_tokens,
            )

        try:
            completion = call_with_retries(create, what="chat", policy=self._retry, sleep=self._sleep)
        except openai.OpenAIError as exc:
            raise UpstreamError(f"OpenAI chat request failed: {type(exc).__name__}") from exc
        content = completion.choices[0].message.content if completion.choices else None
        if not content or not content.strip():
            raise InvalidModelOutputError("the model returned an empty reply")
        return content

"""A call described once, independent of the transport: method, path, query, body, and how to read the answer.
The sync and async clients both execute these, so request building and response parsing exist once."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel

from rapport_client._base_url import API_PREFIX

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

QueryValue = str | int | float | bool | None


@dataclass(frozen=True)
class Call(Generic[T]):
    method: str
    path: str
    parse: Callable[[httpx.Response], T]
    params: Mapping[str, QueryValue] = field(default_factory=dict)
    body: Any = None
    # None: the runner gives a write a fresh key, the same on every retry of this call.
    idempotency_key: str | None = None
    # A delete: a 404 answered to a retry means the first attempt did it and its answer was lost.
    absent_means_done: bool = False
    # A body that is not one JSON document (an import's JSON lines), sent as is with its media type.
    content: bytes | None = None
    content_type: str | None = None
    # A call about one assistant's part of a relationship: where its `agent_id` goes ("query" or "body"), so the
    # client's default assistant is added when the call names none.
    agent_in: str | None = None

    def for_agent(self, agent_id: str | None) -> Call[T]:
        """This call as the assistant `agent_id` makes it, unless it names one already (or is about no assistant)."""
        if agent_id is None or self.agent_in is None:
            return self
        if self.agent_in == "query":
            if self.params.get("agent_id") is not None:
                return self
            return replace(self, params={**self.params, "agent_id": agent_id})
        if not isinstance(self.body, Mapping) or self.body.get("agent_id") is not None:
            return self
        return replace(self, body={**self.body, "agent_id": agent_id})

    @property
    def is_write(self) -> bool:
        return self.method != "GET"

    def query(self) -> dict[str, str | int | float]:
        """The query string's values: absent ones dropped, booleans as the API reads them."""
        out: dict[str, str | int | float] = {}
        for name, value in self.params.items():
            if value is None:
                continue
            out[name] = ("true" if value else "false") if isinstance(value, bool) else value
        return out


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    next_cursor: str | None


def path(*segments: str) -> str:
    """`/v1/...` with each id percent-encoded, so an id holding `/` or `?` stays one segment."""
    for segment in segments:
        if not isinstance(segment, str) or not segment:
            raise ValueError(f"an id in the path is empty or not a string: {segment!r}")
    return API_PREFIX + "".join("/" + quote(s, safe="") for s in segments)


def model(kind: type[M]) -> Callable[[httpx.Response], M]:
    def parse(response: httpx.Response) -> M:
        return kind.model_validate(response.json())

    return parse


def page(kind: type[M], items_field: str) -> Callable[[httpx.Response], Page[M]]:
    def parse(response: httpx.Response) -> Page[M]:
        body = response.json()
        return Page([kind.model_validate(item) for item in body[items_field]], body.get("next_cursor"))

    return parse


def nothing(response: httpx.Response) -> None:
    return None


def compact(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON body without the fields left out (None), datetimes as ISO 8601."""
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in fields.items() if v is not None}

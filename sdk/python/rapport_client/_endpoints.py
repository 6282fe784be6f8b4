"""Every route of the API as a function from the caller's arguments to a `Call`: the one place that knows paths,
parameter names and answer shapes. The clients expose these under the same names (`_resources.py`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from rapport_client import _portability, models
from rapport_client._calls import Call, Page, compact, model, nothing, page, path

DEFAULT_DOMAIN = "user"

# Memories


def memories_add(
    user_id: str,
    content: str,
    *,
    domain: str = DEFAULT_DOMAIN,
    type: str | None = None,
    importance: float | None = None,
    confidence: float | None = None,
    metadata: Mapping[str, Any] | None = None,
    occurred_at: datetime | None = None,
    idempotency_key: str | None = None,
    agent_id: str | None = None,
) -> Call[models.Memory]:
    """Store one memory about `user_id`. `domain` is `user` (facts about the person) or `relational` (how the
    assistant and the person work together); `type` defaults on the server to `fact` / `shared_context`.
    `agent_id`: which of the tenant's assistants (a relational memory is that assistant's own)."""
    body = compact(
        {
            "content": content,
            "domain": domain,
            "type": type,
            "importance": importance,
            "confidence": confidence,
            "metadata": dict(metadata) if metadata is not None else None,
            "occurred_at": occurred_at,
            "agent_id": agent_id,
        }
    )
    return Call(
        "POST",
        path("users", user_id, "memories"),
        model(models.Memory),
        body=body,
        idempotency_key=idempotency_key,
        agent_in="body",
    )


def memories_add_many(
    user_id: str,
    memories: Sequence[Mapping[str, Any]],
    *,
    idempotency_key: str | None = None,
    agent_id: str | None = None,
) -> Call[models.BatchResult]:
    """Store up to 100 memories in one request, each a mapping of `add`'s fields (`content`, `domain` (default
    `user`), `type`, ...). Each is validated on its own: the answer has a result per memory, `created` or `invalid`
    with its reason. When none is valid nothing is stored and `InvalidRequest` is raised, its `details` the results."""
    items = [compact({"domain": DEFAULT_DOMAIN, **dict(item)}) for item in memories]
    return Call(
        "POST",
        path("users", user_id, "memories", "batch"),
        model(models.BatchResult),
        body=compact({"memories": items, "agent_id": agent_id}),
        idempotency_key=idempotency_key,
        agent_in="body",
    )


def memories_search(
    user_id: str,
    query: str,
    *,
    limit: int | None = None,
    domain: str | None = None,
    type: str | None = None,
    min_similarity: float | None = None,
    include_archived: bool | None = None,
    expand_relations: bool | None = None,
    relation_limit: int | None = None,
    expansion_limit: int | None = None,
    agent_id: str | None = None,
) -> Call[models.SearchResults]:
    """Recall by meaning and keywords, best first (`limit` defaults to the server's 5). `domain` is `user`,
    `relational` or `both` (the default); `expand_relations` also returns memories linked to the hits."""
    params = {
        "query": query,
        "limit": limit,
        "domain": domain,
        "type": type,
        "min_similarity": min_similarity,
        "include_archived": include_archived,
        "expand_relations": expand_relations,
        "relation_limit": relation_limit,
        "expansion_limit": expansion_limit,
        "agent_id": agent_id,
    }
    return Call("GET", path("users", user_id, "memories"), model(models.SearchResults), params=params, agent_in="query")


def memories_list(
    user_id: str,
    *,
    domain: str | None = None,
    type: str | None = None,
    include_archived: bool | None = None,
    page_size: int | None = None,
    cursor: str | None = None,
    agent_id: str | None = None,
) -> Call[Page[models.Memory]]:
    """Every memory of `user_id`, newest first, fetched a page (`page_size`, server default 20) at a time."""
    params = {
        "domain": domain,
        "type": type,
        "include_archived": include_archived,
        "limit": page_size,
        "cursor": cursor,
        "agent_id": agent_id,
    }
    return Call(
        "GET", path("users", user_id, "memories"), page(models.Memory, "memories"), params=params, agent_in="query"
    )


def memories_get(user_id: str, memory_id: str, *, agent_id: str | None = None) -> Call[models.Memory]:
    """One memory; `NotFound` when it does not exist (or belongs to another tenant, or is another assistant's
    relational memory)."""
    return Call(
        "GET",
        path("users", user_id, "memories", memory_id),
        model(models.Memory),
        params={"agent_id": agent_id},
        agent_in="query",
    )


def memories_update(
    user_id: str,
    memory_id: str,
    *,
    content: str | None = None,
    type: str | None = None,
    importance: float | None = None,
    confidence: float | None = None,
    tier: str | None = None,
    status: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    idempotency_key: str | None = None,
    agent_id: str | None = None,
) -> Call[models.Memory]:
    """Change the fields given (the others are kept); returns the memory as stored."""
    body = compact(
        {
            "content": content,
            "type": type,
            "importance": importance,
            "confidence": confidence,
            "tier": tier,
            "status": status,
            "metadata": dict(metadata) if metadata is not None else None,
        }
    )
    if not body:
        raise ValueError("update needs at least one field to change")
    return Call(
        "PATCH",
        path("users", user_id, "memories", memory_id),
        model(models.Memory),
        params={"agent_id": agent_id},
        body=body,
        idempotency_key=idempotency_key,
        agent_in="query",
    )


def memories_delete(
    user_id: str, memory_id: str, *, idempotency_key: str | None = None, agent_id: str | None = None
) -> Call[None]:
    """Delete one memory. A retry answered 404 counts as done: the first attempt deleted it and its answer was lost."""
    return Call(
        "DELETE",
        path("users", user_id, "memories", memory_id),
        nothing,
        params={"agent_id": agent_id},
        idempotency_key=idempotency_key,
        absent_means_done=True,
        agent_in="query",
    )


# Conversations


def interactions_record(
    user_id: str,
    messages: Sequence[Mapping[str, Any] | models.Message],
    *,
    channel: str | None = None,
    session_id: str | None = None,
    occurred_at: datetime | None = None,
    metadata: Mapping[str, Any] | None = None,
    wait: bool = True,
    idempotency_key: str | None = None,
    agent_id: str | None = None,
) -> Call[models.RecordedInteraction]:
    """Record a conversation (`[{"role": "user" | "assistant", "content": ..., "name"?: ...}, ...]`) as history and
    run the ingestion pipeline on it; `wait=False` returns before the pipeline's memories are stored."""
    body = compact(
        {
            "messages": [_message(m) for m in messages],
            "channel": channel,
            "session_id": session_id,
            "occurred_at": occurred_at,
            "metadata": dict(metadata) if metadata is not None else None,
            "agent_id": agent_id,
        }
    )
    return Call(
        "POST",
        path("users", user_id, "interactions"),
        model(models.RecordedInteraction),
        params={"wait": wait},
        body=body,
        idempotency_key=idempotency_key,
        agent_in="body",
    )


def interactions_get(user_id: str, interaction_id: str) -> Call[models.InteractionStatus]:
    """One recorded interaction and where its pipeline stands (`pending`, `done`, `failed`)."""
    return Call("GET", path("users", user_id, "interactions", interaction_id), model(models.InteractionStatus))


def interactions_history(
    user_id: str, *, page_size: int | None = None, cursor: str | None = None
) -> Call[Page[models.Interaction]]:
    """The user's interactions, newest first, a page at a time."""
    return Call(
        "GET",
        path("users", user_id, "history"),
        page(models.Interaction, "interactions"),
        params={"limit": page_size, "cursor": cursor},
    )


def _message(message: Mapping[str, Any] | BaseModel) -> dict[str, Any]:
    fields = message.model_dump(exclude_none=True) if isinstance(message, BaseModel) else dict(message)
    return compact(fields)


# /v1/process and turns


def process(
    user_id: str,
    message: str,
    *,
    channel: str | None = None,
    session_id: str | None = None,
    previous_turn: Mapping[str, str] | None = None,
    idempotency_key: str | None = None,
    agent_id: str | None = None,
) -> Call[models.ProcessResult]:
    """Context for one user message: relevant memories, relational state, a system prompt, the crisis flag, and the
    server model's reply (None when it has none: answer yourself and send it with `turns.reply`, or with the next
    message as `previous_turn={"turn_id": ..., "reply": ...}`)."""
    body = compact(
        {
            "user_id": user_id,
            "message": message,
            "channel": channel,
            "session_id": session_id,
            "previous_turn": dict(previous_turn) if previous_turn is not None else None,
            "agent_id": agent_id,
        }
    )
    return Call(
        "POST",
        path("process"),
        model(models.ProcessResult),
        body=body,
        idempotency_key=idempotency_key,
        agent_in="body",
    )


def turns_reply(
    user_id: str, turn_id: str, reply: str, *, wait: bool = True, idempotency_key: str | None = None
) -> Call[models.TurnRecorded]:
    """Record the reply your model gave to a processed message (`ProcessResult.turn_id`): the exchange becomes an
    interaction, run through the pipeline (`wait=False` returns before its memories are stored). Sending it again
    answers the same record, `replayed=True`."""
    return Call(
        "POST",
        path("turns", turn_id, "reply"),
        model(models.TurnRecorded),
        params={"wait": wait},
        body={"user_id": user_id, "reply": reply},
        idempotency_key=idempotency_key,
    )


# Relational state, events, people, privacy


def state_get(user_id: str, *, agent_id: str | None = None) -> Call[models.RelationalState]:
    """Trust, sentiment, grudge and familiarity as of now (decay applied), relation bias, tone modifier, profile:
    of the assistant `agent_id`'s relationship with the person (each assistant has its own)."""
    return Call(
        "GET",
        path("users", user_id, "state"),
        model(models.RelationalState),
        params={"agent_id": agent_id},
        agent_in="query",
    )


def events_report(
    user_id: str,
    type: str,
    note: str | None = None,
    *,
    idempotency_key: str | None = None,
    agent_id: str | None = None,
) -> Call[models.EventReported]:
    """Report `broken_promise`, `promise_kept` or `crisis_resolved`; the state after it is in the answer. A retry
    counts once (the same Idempotency-Key: the answer is `replayed`)."""
    return Call(
        "POST",
        path("users", user_id, "events"),
        model(models.EventReported),
        body=compact({"type": type, "note": note, "agent_id": agent_id}),
        idempotency_key=idempotency_key,
        agent_in="body",
    )


def events_list(
    user_id: str, *, page_size: int | None = None, cursor: str | None = None, agent_id: str | None = None
) -> Call[Page[models.StateEvent]]:
    """Reported events, newest first."""
    return Call(
        "GET",
        path("users", user_id, "events"),
        page(models.StateEvent, "events"),
        params={"limit": page_size, "cursor": cursor, "agent_id": agent_id},
        agent_in="query",
    )


def people_list(user_id: str, *, page_size: int | None = None, cursor: str | None = None) -> Call[Page[models.Person]]:
    """The people the user mentions, with the user's sentiment toward each and what was said."""
    return Call(
        "GET",
        path("users", user_id, "people"),
        page(models.Person, "people"),
        params={"limit": page_size, "cursor": cursor},
    )


def people_get(user_id: str, slug: str) -> Call[models.Person]:
    """One person the user mentions, by slug (`sarah`)."""
    return Call("GET", path("users", user_id, "people", slug), model(models.Person))


def users_erase(user_id: str, *, idempotency_key: str | None = None) -> Call[models.Erasure]:
    """Erase everything about the end user: memories, history, state, people; the audit trail keeps counts only."""
    return Call("DELETE", path("privacy", "erase", user_id), model(models.Erasure), idempotency_key=idempotency_key)


def users_list(*, page_size: int | None = None, cursor: str | None = None) -> Call[Page[models.UserSummary]]:
    """The tenant's end users in id order, each with memory and interaction counts and when last seen."""
    return Call("GET", path("users"), page(models.UserSummary, "users"), params={"limit": page_size, "cursor": cursor})


def users_export(user_id: str, *, cursor: str | None = None) -> Call[Page[dict[str, Any]]]:
    """One page of the end user's export; iterated, every line of it, the header first (`rapport-export`)."""
    return Call(
        "GET", path("users", user_id, "export"), _portability.export_page(cursor is None), params={"cursor": cursor}
    )


def users_import_chunk(
    user_id: str, lines: Sequence[Mapping[str, Any] | str], *, idempotency_key: str | None = None
) -> Call[models.ImportResult]:
    """Import lines in one request (a header is put first when they have none): at most 999 records and under
    1 MiB. `users.import_` sends any number in chunks. Line numbers in the answer count the header as 1."""
    chunk = next(_portability.chunks(lines, user_id=user_id), None)
    body = chunk.body() if chunk else (_portability.encode(_portability.header(user_id)) + "\n").encode()
    return Call(
        "POST",
        path("users", user_id, "import"),
        model(models.ImportResult),
        content=body,
        content_type=_portability.NDJSON,
        idempotency_key=idempotency_key,
    )


def audit_list(
    *,
    user_id: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    page_size: int | None = None,
    cursor: str | None = None,
) -> Call[Page[models.AuditEvent]]:
    """The tenant's audit trail, newest first: every write and privileged read (who, which operation, which end
    user by hash, when, the status) and every erasure. `user_id` narrows to one end user; `since` (inclusive) and
    `until` (exclusive) bound the time. Needs a key with the `admin` scope."""
    params = {
        "user_id": user_id,
        "since": since.isoformat() if since else None,
        "until": until.isoformat() if until else None,
        "limit": page_size,
        "cursor": cursor,
    }
    return Call("GET", path("audit"), page(models.AuditEvent, "events"), params=params)


def agents_list() -> Call[models.Agents]:
    """The tenant's assistants: the default one first, then every one named in a write, each with how many people
    it has relational memories of."""
    return Call("GET", path("agents"), model(models.Agents))

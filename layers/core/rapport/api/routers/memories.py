"""Routes for one end user's memories: create, list or recall, read, change, delete."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from rapport.api.contract import READ, UPSTREAM, WITH_BODY, WRITE, answers
from rapport.api.dependencies import AgentId, UserScope, with_agent
from rapport.api.idempotency import deadline, keyed, replayed
from rapport.api.schemas import (
    BatchCreatedOut,
    BatchInvalidOut,
    CreateMemoriesRequest,
    CreateMemoryRequest,
    MemoryBatchOut,
    MemoryOut,
    MemoryPageOut,
    PatchMemoryRequest,
    RecallHitOut,
)
from rapport.domain.models import DomainFilter, MemoryPatch
from rapport.domain.recall import RecallQuery
from rapport.errors import InvalidInputError
from rapport.services.keyed_writes import KeyedWrites
from rapport.services.memories import MemoryService, NewMemory
from rapport.services.recall import Recall
from rapport.settings import Settings


class NothingStoredError(InvalidInputError):
    """Every memory of a batch was invalid: a 400 whose `details` are the per-memory results."""

    def __init__(self, results: list[BatchInvalidOut]) -> None:
        super().__init__("no memory of the batch is valid; nothing was stored")
        self.details = [r.model_dump(mode="json") for r in results]


def build_memories_router(
    *, memories: MemoryService, recall: Recall, settings: Settings, writes: KeyedWrites
) -> Router:
    router = Router()

    @router.post(
        "/v1/users/<user_id>/memories",
        tags=["memories"],
        summary="Store a memory about an end user",
        description="`domain` is `user` (facts about the person) or `relational` (how the assistant and the person "
        "work together); `type` is one of the domain's types (`fact`, `preference`, … / `shared_context`, "
        "`communication_preference`, …).",
        operation_id="memories_add",
        status_code=201,
        responses=answers({201: "The stored memory"}, errors=(*WITH_BODY, *UPSTREAM)),
    )
    def create_memory(user_id: str, scope: UserScope, body: CreateMemoryRequest, agent_id: AgentId = None) -> MemoryOut:
        scope = with_agent(scope, body.agent_id)
        answer = writes.remember(scope, _new_memory(body), keyed(router, "memories", body), deadline=deadline(router))
        return MemoryOut.of(replayed(router, answer))

    @router.post(
        "/v1/users/<user_id>/memories/batch",
        tags=["memories"],
        summary="Store up to 100 memories in one request, with a result per memory",
        description="The valid memories are stored and the invalid ones reported, each with its message; when none "
        "is valid nothing is stored and the answer is a 400 whose `details` are the results.",
        operation_id="memories_add_many",
        status_code=201,
        responses=answers({201: "A result per memory: created, or invalid and why"}, errors=(*WITH_BODY, *UPSTREAM)),
    )
    def create_memories(
        user_id: str, scope: UserScope, body: CreateMemoriesRequest, agent_id: AgentId = None
    ) -> MemoryBatchOut:
        scope = with_agent(scope, body.agent_id)
        if any(item.agent_id not in (None, scope.agent_id) for item in body.memories):
            raise InvalidInputError("a batch is one assistant's: name it once, in the batch's agent_id")
        news = [_new_memory(item) for item in body.memories]
        answer = writes.remember_batch(scope, news, keyed(router, "memories_batch", body), deadline=deadline(router))
        results = replayed(router, answer)
        items: list[BatchCreatedOut | BatchInvalidOut] = [
            BatchCreatedOut(index=r.index, status="created", memory=MemoryOut.of(r.memory))
            if r.memory is not None
            else BatchInvalidOut(index=r.index, status="invalid", error="invalid_input", message=r.error or "invalid")
            for r in results
        ]
        invalid = [item for item in items if isinstance(item, BatchInvalidOut)]
        if len(invalid) == len(items):
            raise NothingStoredError(invalid)
        return MemoryBatchOut(results=items, created=len(items) - len(invalid), invalid=len(invalid))

    @router.get(
        "/v1/users/<user_id>/memories",
        tags=["memories"],
        summary="Recall by query, or list newest first",
        description="With `query`: hybrid recall (meaning and keywords, scored with relation, recency, importance "
        "and strength), cut at `limit` (default 5). Without: the memories newest first, 20 a page, with `cursor` "
        "paging. Both give `total_stored`.",
        operation_id="memories_list",
        responses=answers({200: "The hits, or a page of memories"}, errors=(*READ, *UPSTREAM)),
    )
    def list_memories(
        user_id: str,
        scope: UserScope,
        agent_id: AgentId = None,
        query: Annotated[str | None, Query(description="Recall by meaning and keywords when given.")] = None,
        domain: Annotated[DomainFilter, Query()] = DomainFilter.BOTH,
        type: Annotated[str | None, Query(description="Only memories of this type.")] = None,
        limit: Annotated[int | None, Query(description="Default 5 with a query, 20 without.")] = None,
        min_similarity: Annotated[float, Query(ge=-1.0, le=1.0)] = 0.0,
        cursor: Annotated[str | None, Query(description="next_cursor of the previous page.")] = None,
        include_archived: Annotated[bool, Query()] = False,
        expand_relations: Annotated[
            bool, Query(description="Also return memories linked to the hits, each with the path that reached it.")
        ] = False,
        relation_limit: Annotated[int | None, Query(ge=0, le=50, description="Links followed per hit (5).")] = None,
        expansion_limit: Annotated[int | None, Query(ge=0, le=200, description="Linked memories in all (25).")] = None,
    ) -> MemoryPageOut:
        total = memories.count(scope)
        if query is not None:
            hits = recall.recall(
                scope,
                RecallQuery(
                    query=query,
                    domain=domain,
                    limit=settings.recall_default_limit if limit is None else limit,
                    min_similarity=min_similarity,
                    memory_type=type,
                    include_archived=include_archived,
                    expand_relations=expand_relations,
                    relation_limit=relation_limit,
                    expansion_limit=expansion_limit,
                ),
            )
            return MemoryPageOut(memories=[RecallHitOut.of_hit(h) for h in hits], total_stored=total, next_cursor=None)
        page = memories.list_memories(
            scope,
            domain=domain,
            memory_type=type,
            limit=20 if limit is None else limit,
            cursor=cursor,
            include_archived=include_archived,  # governance: archived memories only when asked for
        )
        return MemoryPageOut(
            memories=[MemoryOut.of(m) for m in page.items], total_stored=total, next_cursor=page.next_cursor
        )

    @router.get(
        "/v1/users/<user_id>/memories/<memory_id>",
        tags=["memories"],
        summary="Read one memory",
        operation_id="memories_get",
        responses=answers({200: "The memory"}, errors=READ),
    )
    def get_memory(user_id: str, scope: UserScope, memory_id: str, agent_id: AgentId = None) -> MemoryOut:
        return MemoryOut.of(memories.get(scope, memory_id))

    @router.patch(
        "/v1/users/<user_id>/memories/<memory_id>",
        tags=["memories"],
        summary="Change a memory",
        description="Only the fields sent change; new content is embedded again.",
        operation_id="memories_update",
        responses=answers({200: "The memory as changed"}, errors=(*WITH_BODY, *UPSTREAM)),
    )
    def patch_memory(
        user_id: str, scope: UserScope, memory_id: str, body: PatchMemoryRequest, agent_id: AgentId = None
    ) -> MemoryOut:
        patch = MemoryPatch.model_validate(body.model_dump(exclude_unset=True))
        return MemoryOut.of(memories.update(scope, memory_id, patch))

    @router.delete(
        "/v1/users/<user_id>/memories/<memory_id>",
        tags=["memories"],
        summary="Delete a memory",
        operation_id="memories_delete",
        status_code=204,
        responses=answers({204: "Deleted, with its index entry and associations"}, errors=WRITE),
    )
    def delete_memory(
        user_id: str, scope: UserScope, memory_id: str, agent_id: AgentId = None
    ):  # a 204: no body, so no model
        memories.delete(scope, memory_id)
        return Response(status_code=204, content_type=content_types.APPLICATION_JSON, body="")

    return router


def _new_memory(body: CreateMemoryRequest) -> NewMemory:
    return NewMemory(
        content=body.content,
        domain=body.domain,
        type=body.type,
        importance=body.importance,
        confidence=body.confidence,
        metadata=body.metadata,
        occurred_at=body.occurred_at,
    )

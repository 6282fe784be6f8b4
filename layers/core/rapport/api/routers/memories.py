"""Routes for one end user's memories: create, list or recall, read, change, delete."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from rapport.api.dependencies import UserScope
from rapport.api.errors import error_response
from rapport.api.schemas import CreateMemoriesRequest, CreateMemoryRequest, MemoryOut, PatchMemoryRequest, RecallHitOut
from rapport.domain.models import DomainFilter, MemoryPatch
from rapport.domain.recall import RecallQuery
from rapport.services.memories import MemoryService, NewMemory
from rapport.services.recall import Recall
from rapport.settings import Settings


def build_memories_router(*, memories: MemoryService, recall: Recall, settings: Settings) -> Router:
    router = Router()

    @router.post("/v1/users/<user_id>/memories", tags=["memories"], summary="Store a memory about an end user")
    def create_memory(
        user_id: str, scope: UserScope, body: CreateMemoryRequest
    ):  # a Response: powertools cannot build a schema for its annotation
        memory = memories.remember(scope, _new_memory(body))
        return Response(
            status_code=201,
            content_type=content_types.APPLICATION_JSON,
            body=MemoryOut.of(memory).model_dump(mode="json"),
        )

    @router.post(
        "/v1/users/<user_id>/memories/batch",
        tags=["memories"],
        summary="Store up to 100 memories in one request, with a result per memory",
    )
    def create_memories(
        user_id: str, scope: UserScope, body: CreateMemoriesRequest
    ):  # a Response: powertools cannot build a schema for its annotation
        results = memories.remember_batch(scope, [_new_memory(item) for item in body.memories])
        stored = [r for r in results if r.memory is not None]
        items = [
            {"index": r.index, "status": "created", "memory": MemoryOut.of(r.memory).model_dump(mode="json")}
            if r.memory is not None
            else {"index": r.index, "status": "invalid", "error": "invalid_input", "message": r.error}
            for r in results
        ]
        if not stored:
            return error_response(400, "invalid_input", "no memory of the batch is valid; nothing was stored", items)
        return Response(
            status_code=201,
            content_type=content_types.APPLICATION_JSON,
            body={"results": items, "created": len(stored), "invalid": len(results) - len(stored)},
        )

    @router.get("/v1/users/<user_id>/memories", tags=["memories"], summary="Recall by query, or list newest first")
    def list_memories(
        user_id: str,
        scope: UserScope,
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
    ) -> dict:
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
            return {
                "memories": [RecallHitOut.of_hit(h).model_dump(mode="json") for h in hits],
                "total_stored": total,
                "next_cursor": None,
            }
        page = memories.list_memories(
            scope,
            domain=domain,
            memory_type=type,
            limit=20 if limit is None else limit,
            cursor=cursor,
            include_archived=include_archived,  # governance: archived memories only when asked for
        )
        return {
            "memories": [MemoryOut.of(m).model_dump(mode="json") for m in page.items],
            "total_stored": total,
            "next_cursor": page.next_cursor,
        }

    @router.get("/v1/users/<user_id>/memories/<memory_id>", tags=["memories"], summary="Read one memory")
    def get_memory(user_id: str, scope: UserScope, memory_id: str) -> dict:
        return MemoryOut.of(memories.get(scope, memory_id)).model_dump(mode="json")

    @router.patch("/v1/users/<user_id>/memories/<memory_id>", tags=["memories"], summary="Change a memory")
    def patch_memory(user_id: str, scope: UserScope, memory_id: str, body: PatchMemoryRequest) -> dict:
        patch = MemoryPatch.model_validate(body.model_dump(exclude_unset=True))
        updated = memories.update(scope, memory_id, patch)
        return MemoryOut.of(updated).model_dump(mode="json")

    @router.delete("/v1/users/<user_id>/memories/<memory_id>", tags=["memories"], summary="Delete a memory")
    def delete_memory(
        user_id: str, scope: UserScope, memory_id: str
    ):  # a Response: powertools cannot build a schema for its annotation
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

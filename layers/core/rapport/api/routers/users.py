"""Routes for the tenant's end users: the listing, and one person's export and import (portability)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from rapport.api.contract import NDJSON, READ, UPSTREAM, WITH_BODY, answers
from rapport.api.dependencies import TenantId, UserScope
from rapport.api.errors import error_response
from rapport.api.routers.ingest import raw_body
from rapport.api.users_schemas import ExportLineOut, ImportOut, UserOut, UserPageOut
from rapport.services.user_directory import UserDirectory
from rapport.services.user_export import UserExport
from rapport.services.user_import import MAX_LINES, UserImport

_IMPORT_BODY = {
    "required": True,
    "description": f"`rapport-export` lines (at most {MAX_LINES}, and 1 MiB): the header first, then one entity per "
    "line; a file larger than that is sent in chunks, each starting with the header (the SDK and CLI do it).",
    "content": {NDJSON: {"schema": {"type": "string"}}},
}


def build_users_router(*, directory: UserDirectory, export: UserExport, importer: UserImport) -> Router:
    router = Router()

    @router.get(
        "/v1/users",
        tags=["users"],
        summary="The tenant's end users, in id order, with memory and interaction counts",
        operation_id="users_list",
        responses=answers({200: "A page of end users"}, errors=READ),
    )
    def list_users(
        tenant_id: TenantId, limit: Annotated[int, Query()] = 20, cursor: Annotated[str | None, Query()] = None
    ) -> UserPageOut:
        page = directory.page(tenant_id, limit=limit, cursor=cursor)
        return UserPageOut(users=[UserOut.of(s) for s in page.items], next_cursor=page.next_cursor)

    @router.get(
        "/v1/users/<user_id>/export",
        tags=["users"],
        summary="Everything kept about an end user, as JSON lines, a page at a time",
        description="A header line (`format` `rapport-export`, `version` 1, and `next_cursor`: pass it as `cursor` "
        "for the next page, null on the last), then profile, state, memories (embeddings omitted), edges, people, "
        "interactions and filter decisions, one per line with a `kind`.",
        operation_id="users_export",
        responses=answers({200: "Lines of the export"}, errors=READ, model=ExportLineOut, media_type=NDJSON),
    )
    def export_user(user_id: str, scope: UserScope, cursor: Annotated[str | None, Query()] = None):  # JSON lines
        page = export.page(scope, cursor)
        return Response(status_code=200, content_type=NDJSON, body=page.ndjson())

    @router.post(
        "/v1/users/<user_id>/import",
        tags=["users"],
        summary="Import an export's lines into an end user; importing the same lines again stores nothing twice",
        description="Each line is validated on its own: the valid ones are written under the ids they carry "
        "(memories embedded again), the others reported with their line number. A memory or interaction whose id is "
        "already stored is skipped.",
        operation_id="users_import",
        responses=answers(
            {200: "Counts by kind, and an error per rejected line"}, errors=(*WITH_BODY, *UPSTREAM), model=ImportOut
        ),
        openapi_extensions={"requestBody": _IMPORT_BODY},
    )
    def import_user(user_id: str, scope: UserScope):  # a Response the contract's model describes
        event = router.current_event
        media_type = (event.headers.get("content-type") or "").split(";")[0].strip().lower()
        if media_type != NDJSON:
            return error_response(
                415,
                "unsupported_media_type",
                f"send the lines with 'Content-Type: {NDJSON}', not {media_type or 'none'}",
            )
        try:
            text = raw_body(event).decode("utf-8")
        except (UnicodeDecodeError, ValueError):
            return error_response(400, "malformed_json", "the body is not UTF-8 text")
        result = importer.import_text(scope, text)
        return Response(
            status_code=200,
            content_type=content_types.APPLICATION_JSON,
            body=ImportOut.of(result).model_dump(mode="json"),
        )

    return router

"""Routes for the people an end user mentions."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from rapport.api.identity import CallerOf
from rapport.api.relational_schemas import PersonOut
from rapport.composition.services import Services
from rapport.domain.identifiers import check_user_id


def build_people_router(services: Services, caller_of: CallerOf) -> Router:
    router = Router()
    people = services.people

    def tenant() -> str:
        return caller_of(router.current_event).tenant_id

    @router.get("/v1/users/<user_id>/people", tags=["people"], summary="People the user mentions")
    def list_people(
        user_id: str,
        limit: Annotated[int, Query()] = 50,
        cursor: Annotated[str | None, Query()] = None,
    ) -> dict:
        page = people.list_people(tenant(), check_user_id(user_id), limit=limit, cursor=cursor)
        return {
            "people": [PersonOut.of(p).model_dump(mode="json") for p in page.items],
            "next_cursor": page.next_cursor,
        }

    @router.get("/v1/users/<user_id>/people/<slug>", tags=["people"], summary="One person the user mentions")
    def get_person(user_id: str, slug: str) -> dict:
        return PersonOut.of(people.get(tenant(), check_user_id(user_id), slug)).model_dump(mode="json")

    return router

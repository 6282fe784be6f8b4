"""Routes for the people an end user mentions."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from rapport.api.dependencies import UserScope
from rapport.api.relational_schemas import PersonOut
from rapport.services.people import PeopleService


def build_people_router(people: PeopleService) -> Router:
    router = Router()

    @router.get("/v1/users/<user_id>/people", tags=["people"], summary="People the user mentions")
    def list_people(
        user_id: str,
        scope: UserScope,
        limit: Annotated[int, Query()] = 50,
        cursor: Annotated[str | None, Query()] = None,
    ) -> dict:
        page = people.list_people(scope, limit=limit, cursor=cursor)
        return {
            "people": [PersonOut.of(p).model_dump(mode="json") for p in page.items],
            "next_cursor": page.next_cursor,
        }

    @router.get("/v1/users/<user_id>/people/<slug>", tags=["people"], summary="One person the user mentions")
    def get_person(user_id: str, scope: UserScope, slug: str) -> dict:
        return PersonOut.of(people.get(scope, slug)).model_dump(mode="json")

    return router

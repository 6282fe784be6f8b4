"""Routes for the people an end user mentions."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from rapport.api.contract import READ, answers
from rapport.api.dependencies import UserScope
from rapport.api.relational_schemas import PeoplePageOut, PersonOut
from rapport.services.people import PeopleService


def build_people_router(people: PeopleService) -> Router:
    router = Router()

    @router.get(
        "/v1/users/<user_id>/people",
        tags=["people"],
        summary="People the user mentions",
        operation_id="people_list",
        responses=answers({200: "A page of people, most mentioned first"}, errors=READ),
    )
    def list_people(
        user_id: str,
        scope: UserScope,
        limit: Annotated[int, Query()] = 50,
        cursor: Annotated[str | None, Query()] = None,
    ) -> PeoplePageOut:
        page = people.list_people(scope, limit=limit, cursor=cursor)
        return PeoplePageOut(people=[PersonOut.of(p) for p in page.items], next_cursor=page.next_cursor)

    @router.get(
        "/v1/users/<user_id>/people/<slug>",
        tags=["people"],
        summary="One person the user mentions",
        operation_id="people_get",
        responses=answers(
            {200: "The person: name, role, the user's sentiment toward them, what was said"}, errors=READ
        ),
    )
    def get_person(user_id: str, scope: UserScope, slug: str) -> PersonOut:
        return PersonOut.of(people.get(scope, slug))

    return router

"""The second recall pass (docs/recall.md, "A second pass for multi-hop questions"): a fact linked to the question only
through a name in the first hit, said in another sitting, is found by feeding that hit back."""

from __future__ import annotations

import pytest

from rapport.composition.services import Services, build_services
from rapport.domain.recall import RecallQuery
from rapport.domain.scope import Scope
from rapport.services.interactions import NewInteraction
from rapport.settings import RecallAcrossSettings

pytestmark = pytest.mark.integration

T, U = "tenant-a", "user-1"
QUESTION = "Which books did Melanie read on Caroline's recommendation?"
RECOMMENDED = "Melanie, my recommendation: read Becoming Nicole, a book about a family like mine."
FINISHED = "Finished Becoming Nicole last night. What a moving memoir."


def talk(services: Services) -> None:
    scope = Scope(T, U)

    def sitting(session: str, *turns: tuple[str, str]) -> None:
        messages = [{"role": "user", "name": name, "content": content} for name, content in turns]
        services.interactions.record(
            scope, NewInteraction.model_validate({"messages": messages, "session_id": session})
        )

    # Given: the recommendation in one sitting, and in another, weeks later, Melanie saying she read it, in words
    # the question does not use: only the title links the two. Around them, Melanie's talk of reading to her kids,
    # which matches the question's words better than the fact asked for.
    sitting("s-1", ("Caroline", RECOMMENDED), ("Melanie", "Thanks, I will look for it."))
    sitting(
        "s-2",
        *[("Melanie", f"I read books to the kids every night, book number {n} this month.") for n in range(1, 41)],
    )
    sitting("s-3", ("Caroline", "How was your week?"), ("Melanie", FINISHED))


def answer(services: Services, second_pass: bool) -> list[str]:
    across = RecallAcrossSettings(second_pass=second_pass)
    # A small candidate pool, so that the first pass alone cannot reach the fact in a store this size.
    settings = services.settings.model_copy(update={"recall_across": across, "recall_candidate_pool": 4})
    built = build_services(
        settings, clock=services.clock, store=services.store, index=services.index, embedder=services.embedder
    )
    hits = built.recall.recall(Scope(T, U), RecallQuery(query=QUESTION, limit=6))
    return [h.memory.content for h in hits]


def test_the_fact_linked_through_the_first_hit_comes_back_with_the_second_pass(services: Services) -> None:
    talk(services)
    without = answer(services, second_pass=False)
    with_pass = answer(services, second_pass=True)
    # The first pass finds the recommendation, not what came of it
    assert RECOMMENDED in without
    assert FINISHED not in without
    # Fed back, the first hit's title finds it, and the first hits keep their places
    assert FINISHED in with_pass
    assert with_pass[0] == without[0]


def test_the_second_pass_reads_the_store_once_for_what_it_alone_found(services: Services) -> None:
    talk(services)
    reads: list[int] = []
    store = services.store
    original = store.get_memories

    def counted(scope: Scope, memory_ids, *, vectors=None):  # type: ignore[no-untyped-def]
        ids = list(memory_ids)
        reads.append(len(ids))
        return original(scope, ids, vectors=vectors)

    store.get_memories = counted  # type: ignore[method-assign]
    try:
        answer(services, second_pass=True)
    finally:
        store.get_memories = original  # type: ignore[method-assign]
    # One read for the first pass's candidates, one for the second pass's new ones, none read twice
    assert len(reads) == 2
    assert reads[1] < reads[0] + 4


def test_a_question_about_one_fact_takes_no_second_pass(services: Services) -> None:
    talk(services)
    searches: list[str] = []
    index = services.index
    original = index.hybrid_search

    def counted(query, vector, text, *, keyword_k):  # type: ignore[no-untyped-def]
        searches.append(text)
        return original(query, vector, text, keyword_k=keyword_k)

    index.hybrid_search = counted  # type: ignore[method-assign]
    try:
        settings = services.settings.model_copy(update={"recall_across": RecallAcrossSettings(second_pass=True)})
        built = build_services(
            settings, clock=services.clock, store=services.store, index=index, embedder=services.embedder
        )
        built.recall.recall(Scope(T, U), RecallQuery(query="What did Caroline recommend?", limit=4))
        built.recall.recall(Scope(T, U), RecallQuery(query=QUESTION, limit=6))
    finally:
        index.hybrid_search = original  # type: ignore[method-assign]
    assert searches[0] == "What did Caroline recommend?"
    assert len(searches) == 3  # one for the plain question, two for the one gathering facts
    assert "becoming nicole" in searches[2]

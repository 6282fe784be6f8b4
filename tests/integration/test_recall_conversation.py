"""Recall reads a message in its conversation (docs/recall.md): the reply to a matching question comes back with it."""

from __future__ import annotations

import pytest

from rapport.composition.services import Services, build_services
from rapport.domain.models import Domain, Memory, PrecedingMessage
from rapport.domain.recall import RecallQuery
from rapport.domain.scope import Scope
from rapport.services.interactions import NewInteraction
from rapport.settings import RecallContextWeights

pytestmark = pytest.mark.integration

T, U = "tenant-a", "user-1"


def chat(services: Services) -> None:
    # Given: a question and its answer, which shares no word with a later query about pets, among other talk
    services.interactions.record(
        Scope(T, U),
        NewInteraction.model_validate(
            {
                "messages": [
                    {"role": "user", "content": "Caroline, what pets do you have at home?", "name": "Melanie"},
                    {"role": "user", "content": "Two cats, Luna and Oliver, and a guinea pig.", "name": "Caroline"},
                    {"role": "user", "content": "I painted a lake sunrise last year.", "name": "Melanie"},
                    {"role": "user", "content": "Pets are such good company for kids.", "name": "Melanie"},
                ],
                "session_id": "s-1",
            }
        ),
    )


def answer_rank(services: Services) -> int:
    hits = services.recall.recall(Scope(T, U), RecallQuery(query="Which pets does Caroline have?", limit=4))
    return [h.memory.content for h in hits].index("Two cats, Luna and Oliver, and a guinea pig.")


def test_the_answer_to_a_matching_question_ranks_with_it(services: Services) -> None:
    chat(services)
    hits = services.recall.recall(Scope(T, U), RecallQuery(query="Which pets does Caroline have?", limit=4))
    assert answer_rank(services) <= 1
    answer = next(h for h in hits if h.memory.content.startswith("Two cats"))
    assert "answers a matching question" in answer.match_reasons
    assert "said by the person asked about" in answer.match_reasons


@pytest.mark.parametrize(("reply_weight", "falls_behind"), [(0.0, True), (0.7, False)])
def test_without_the_conversation_rules_the_answer_falls_behind_unless_read_in_reply(
    services: Services, reply_weight: float, falls_behind: bool
) -> None:
    # Recall's conversation rules off; the answer embedded alone, or after the question it answers (the default)
    off = services.settings.model_copy(
        update={
            "recall_context": RecallContextWeights(answer=0, conversation=0, speaker=0, adjacent=0),
            "episode_reply_weight": reply_weight,
        }
    )
    plain = build_services(
        off, clock=services.clock, store=services.store, index=services.index, embedder=services.embedder
    )
    chat(plain)
    assert (answer_rank(plain) > 1) is falls_behind


# --- replies are embedded after the message they follow --------------------------------------------------------------


def record(services: Services, session: str | None, *turns: tuple[str, str], system: str | None = None) -> list[Memory]:
    messages = [{"role": "system", "content": system}] if system else []
    messages += [{"role": "user", "name": name, "content": content} for name, content in turns]
    recorded = services.interactions.record(
        Scope(T, U), NewInteraction.model_validate({"messages": messages, "session_id": session})
    )
    return recorded.episodes


def test_each_episode_keeps_the_message_said_before_it_within_its_session(services: Services) -> None:
    first = record(services, "s-1", ("Melanie", "Our concert was the best party."), ("Caroline", "Who sang?"))
    assert first[0].in_reply_to is None  # the first message of the session follows nothing
    assert first[1].in_reply_to == PrecedingMessage(speaker="Melanie", content="Our concert was the best party.")
    # The next exchange of the same session: its first message follows the last one recorded (system messages skipped)
    later = record(services, "s-1", ("Melanie", "Matt Patterson did."), system="be kind")
    assert later[0].in_reply_to == PrecedingMessage(speaker="Caroline", content="Who sang?")
    # Another session (or none) starts afresh
    assert record(services, "s-2", ("Melanie", "Hello again."))[0].in_reply_to is None
    assert record(services, None, ("Melanie", "Hi."))[0].in_reply_to is None
    # It is stored with the episode and shown by the API's memory shape
    stored = services.memories.get(Scope(T, U), first[1].id)
    assert stored.in_reply_to == first[1].in_reply_to


def test_a_long_preceding_message_keeps_its_end(services: Services) -> None:
    long = "filler " * 200 + "so what did you name the puppy?"
    episodes = record(services, "s-1", ("Melanie", long), ("Caroline", "Biscuit."))
    kept = episodes[1].in_reply_to
    assert kept is not None and len(kept.content) == services.settings.episode_reply_chars
    assert kept.content.endswith("so what did you name the puppy?")


def test_a_reply_is_found_by_the_topic_of_the_message_it_follows(services: Services) -> None:
    # Given: a statement (not a question, so the answer rule cannot help) and a reply sharing no word with the query
    query = RecallQuery(query="the birthday concert", limit=10)

    def found(built: Services) -> bool:
        record(
            built,
            "s-1",
            ("Melanie", "Our birthday concert last night was wonderful."),
            ("Caroline", "Matt Patterson sang every song, what a voice."),
        )
        return any(h.memory.content.startswith("Matt Patterson") for h in built.recall.recall(Scope(T, U), query))

    # Then: read after the message it follows, the reply comes back; embedded alone (weight 0), it does not
    assert found(services)
    alone = services.settings.model_copy(
        update={"episode_reply_weight": 0.0, "data_dir": services.settings.data_dir.parent / "alone"}
    )
    assert not found(build_services(alone, clock=services.clock, embedder=services.embedder))


# --- keyword scores are read deeper than the candidate pool ---------------------------------------------------------


def test_a_memory_found_by_meaning_keeps_its_keyword_score_past_the_pool(services: Services) -> None:
    # Given: six short memories that say "kayak" (the best by BM25) and one long memory that says it once, whose
    # vector is the query's own (the best by meaning), with a pool of four
    query = "kayak"
    vector = services.embedder.embed([query])[0]
    now = services.clock.now()
    noise = services.embedder.embed([f"unrelated words number {n}" for n in range(6)])
    contents = [("kayak kayak trip", noise[n]) for n in range(6)]
    contents.append(("We spoke about many things that week and also the kayak, among others " * 3, vector))
    for n, (content, embedding) in enumerate(contents):
        memory = Memory(
            id=f"m{n}", tenant_id=T, user_id=U, domain=Domain.USER, type="fact", content=content,
            created_at=now, updated_at=now, last_reinforced_at=now, embedding=embedding,
        )  # fmt: skip
        services.store.put_memory(memory)
        services.index.upsert(memory)

    def target_score(depth: int) -> float:
        settings = services.settings.model_copy(update={"recall_candidate_pool": 1, "recall_keyword_depth": depth})
        built = build_services(
            settings, clock=services.clock, store=services.store, index=services.index, embedder=services.embedder
        )
        hits = built.recall.recall(Scope(T, U), RecallQuery(query=query, limit=1))
        assert hits[0].memory.id == "m6"  # found by meaning either way
        return hits[0].score

    # Then: read past the pool, its keyword score counts; cut at the pool, it would be zero
    shallow, deep = target_score(1), target_score(200)
    assert deep > shallow
    assert deep - shallow < services.settings.weights.keyword  # a fraction of the best keyword match's share


def test_the_assistants_replies_are_embedded_as_said(services: Services) -> None:
    recorded = services.interactions.record(
        Scope(T, U),
        NewInteraction.model_validate(
            {
                "messages": [
                    {"role": "user", "content": "My dog Max is sick again."},
                    {"role": "assistant", "content": "I'm sorry. Did the vet call back?"},
                    {"role": "user", "content": "Not yet."},
                ]
            }
        ),
    )
    assert [e.in_reply_to for e in recorded.episodes] == [
        None,
        None,  # the assistant's reply would otherwise come back each time the person says the same again
        PrecedingMessage(speaker="assistant", content="I'm sorry. Did the vet call back?"),
    ]


# --- a keyword share is of no less than half of what the query's words could score -----------------------------------


def test_a_best_keyword_match_on_one_common_word_is_not_full_keyword_evidence(services: Services) -> None:
    # Given: twenty memories that say "trip", none of the question's rarer words
    now = services.clock.now()
    for n in range(20):
        content = f"Notes from the trip, day {n}"
        memory = Memory(
            id=f"m{n:02d}", tenant_id=T, user_id=U, domain=Domain.USER, type="fact", content=content,
            created_at=now, updated_at=now, last_reinforced_at=now, embedding=services.embedder.embed([content])[0],
        )  # fmt: skip
        services.store.put_memory(memory)
        services.index.upsert(memory)

    def scores(floor: float) -> dict[str, float]:
        settings = services.settings.model_copy(update={"recall_keyword_floor": floor})
        built = build_services(
            settings, clock=services.clock, store=services.store, index=services.index, embedder=services.embedder
        )
        hits = built.recall.recall(Scope(T, U), RecallQuery(query="the canoe trip to Lisbon", limit=30))
        return {h.memory.id: h.score for h in hits}

    # Then: shares of the best one alone give the best "trip" match the keyword weight in full; with the floor, a
    # fraction of it (one common word of three)
    alone, floored = scores(0.0), scores(0.5)
    best = max(alone, key=lambda i: alone[i])
    assert alone[best] - floored[best] > services.settings.weights.keyword / 2
    # while a memory holding every word of the question keeps its full share either way
    content = "The canoe trip to Lisbon"
    whole = Memory(
        id="whole", tenant_id=T, user_id=U, domain=Domain.USER, type="fact", content=content,
        created_at=now, updated_at=now, last_reinforced_at=now, embedding=services.embedder.embed([content])[0],
    )  # fmt: skip
    services.store.put_memory(whole)
    services.index.upsert(whole)
    assert scores(0.0)["whole"] == scores(0.5)["whole"]

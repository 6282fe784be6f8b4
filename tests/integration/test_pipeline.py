"""The ingestion pipeline in process with the rule-based model: worked examples, de-duplication, contradiction,
idempotency, the fallback, and the filter-decision routes."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any
from unittest.mock import patch

import pytest
from pydantic import BaseModel

from rapport.api.app import create_lambda_app
from rapport.composition.services import Services, build_services
from rapport.domain.filtering import Verdict
from rapport.domain.lifecycle.decay import effective_strength
from rapport.domain.models import Domain, DomainFilter, MemoryStatus, Message
from rapport.domain.relations import RelationType
from rapport.domain.rules.model import RulesLanguageModel
from rapport.domain.scope import Scope
from rapport.errors import InvalidModelOutputError, UpstreamError
from rapport.pipeline.in_process import InProcessPipeline
from rapport.ports.pipeline import PipelineRequest
from rapport.services.interactions import NewInteraction, RecordedInteraction
from tests.integration.api_events import FakeLambdaContext, rest_event

pytestmark = pytest.mark.integration

T, U = "tenant-a", "user-1"

DEBUGGING = [
    ("user", "I'm getting a 500 on /users again. It's our main API at work."),
    ("assistant", "Let's add step-by-step logging around the request handlers to see where it fails."),
    ("user", "OK, the logs show the auth middleware throws before the handler runs."),
    ("assistant", "Then the auth layer is the root cause: check how the token is validated."),
    ("user", "That was it, it was the auth middleware, thanks — the step-by-step logging really helped"),
]
SNAPPING = [
    ("user", "Why does the deploy keep failing?"),
    ("assistant", "It could be several things. Could you share the build log?"),
    ("user", "This is useless!! You're not listening, I already told you it's the CI config"),
]
CONFUSED = [
    ("user", "What's a closure in JavaScript?"),
    ("assistant", "A closure is a function bundled with references to its surrounding lexical environment..."),
    ("user", "I'm confused, that's way too technical for me"),
]


def record(services: Services, turns: list[tuple[str, str]], **options: Any) -> RecordedInteraction:
    messages = [{"role": role, "content": content} for role, content in turns]
    return services.interactions.record(Scope(T, U), NewInteraction.model_validate({"messages": messages, **options}))


def contents(recorded: RecordedInteraction) -> dict[str, Any]:
    assert recorded.pipeline is not None and recorded.pipeline.status == "completed", recorded.pipeline
    return {m.content: m for m in recorded.pipeline.memories}


# --- worked examples: a debugging session, a user snapping at the assistant ----------------------------------------


def test_a_debugging_session_becomes_user_and_relational_memories_linked_to_it(services: Services) -> None:
    recorded = record(services, DEBUGGING)
    memories = contents(recorded)
    interaction_id = recorded.interaction.id

    user = memories["User is debugging an API at work"]
    outcome = next(m for m in memories.values() if m.type == "collaboration_outcome")
    approach = next(m for m in memories.values() if m.type == "approach_effectiveness")
    assert user.domain is Domain.USER
    assert "500 on /users" in outcome.content and "auth" in outcome.content and "root cause" in outcome.content
    assert approach.content == "Step-by-step logging worked well with this user"
    for memory in memories.values():
        # provenance: an edge to the interaction, and the interaction in the memory's source
        (edge,) = services.edges.outgoing(Scope(T, U), memory.id, RelationType.DERIVED_FROM)
        assert edge.target_id == interaction_id and edge.properties["transformation"] == "extracted"
        assert memory.source.interaction_id == interaction_id
        assert memory.metadata["extractor"] == "rules"
    # cross-domain association, both ways, in the memories and as edges
    for relational in (outcome, approach):
        assert user.id in services.memories.get(Scope(T, U), relational.id).associations
        assert services.edges.get(Scope(T, U), relational.id, RelationType.RELATES_TO, user.id) is not None
        assert services.edges.get(Scope(T, U), user.id, RelationType.RELATES_TO, relational.id) is not None
    assert {outcome.id, approach.id} <= set(services.memories.get(Scope(T, U), user.id).associations)
    # and the interaction finds what came from it through the incoming edges
    derived = {e.source_id for e in services.edges.incoming(Scope(T, U), interaction_id, RelationType.DERIVED_FROM)}
    assert derived == set(recorded.pipeline.outcome.stored)  # type: ignore[union-attr]


def test_a_user_snapping_at_the_assistant_leaves_no_grudge_in_memory(services: Services) -> None:
    recorded = record(services, SNAPPING)
    assert recorded.pipeline is not None and recorded.pipeline.status == "completed"
    everything = services.memories.list_memories(
        Scope(T, U), domain=DomainFilter.BOTH, memory_type=None, limit=100, cursor=None
    ).items
    assert not [m.content for m in everything if "frustrat" in m.content.lower()]
    # The filter saw the raw observation and said why it dropped it
    decisions = services.filter_decisions.list(Scope(T, U), limit=20, cursor=None).items
    (blocked,) = [d for d in decisions if d.verdict is Verdict.BLOCKED]
    assert blocked.original == "User was frustrated with me" and blocked.content is None and blocked.memory_id is None
    assert "defensive" in blocked.reason


def test_confusion_is_stored_as_the_lesson_it_teaches(services: Services) -> None:
    memories = contents(record(services, CONFUSED))
    reframed = memories["User benefits from simpler explanations first"]
    assert reframed.domain is Domain.RELATIONAL
    assert reframed.metadata["original"] == "User got confused by my technical explanation"
    (edge,) = services.edges.outgoing(Scope(T, U), reframed.id, RelationType.DERIVED_FROM)
    assert edge.properties["transformation"] == "reframed"
    assert "User got confused by my technical explanation" not in memories


# --- store: near-duplicates, contradictions, tiers -------------------------------------------------------------------


def test_a_near_duplicate_reinforces_the_memory_instead_of_adding_one(services: Services) -> None:
    first = contents(record(services, [("user", "I prefer morning meetings")]))["User prefers morning meetings"]
    # Given the memory has faded since (decay belongs to governance; here it is set directly)
    services.store.put_memory(services.store.get_memory(Scope(T, U), first.id).model_copy(update={"strength": 0.5}))

    again = record(services, [("user", "As I said, I prefer morning meetings.")])

    assert again.pipeline is not None and again.pipeline.outcome is not None
    assert again.pipeline.outcome.stored == [] and again.pipeline.outcome.reinforced == [first.id]
    memory = services.memories.get(Scope(T, U), first.id)
    assert memory.strength == pytest.approx(0.6)
    assert memory.metadata["observations"] == 2
    (edge,) = services.edges.incoming(Scope(T, U), first.id, RelationType.REINFORCES)
    assert edge.source_id == again.interaction.id and edge.properties["observations"] == 2
    preferences = services.memories.list_memories(
        Scope(T, U), domain=DomainFilter.USER, memory_type="preference", limit=10, cursor=None
    )
    assert [m.id for m in preferences.items] == [first.id]


def test_strength_never_goes_past_one(services: Services) -> None:
    for _ in range(3):
        record(services, [("user", "I prefer morning meetings")])
    (memory,) = services.memories.list_memories(
        Scope(T, U), domain=DomainFilter.USER, memory_type="preference", limit=10, cursor=None
    ).items
    assert memory.strength == 1.0 and memory.metadata["observations"] == 3


def test_a_contradicted_fact_is_invalidated_and_kept_as_history(services: Services) -> None:
    acme = contents(record(services, [("user", "I work at Acme")]))["User works at Acme"]
    correction = record(services, [("user", "Actually, I work at Globex now, not Acme.")])
    globex = contents(correction)["User works at Globex"]

    assert correction.pipeline is not None and correction.pipeline.outcome is not None
    assert correction.pipeline.outcome.invalidated == [acme.id]
    old = services.memories.get(Scope(T, U), acme.id)
    assert old.status is MemoryStatus.INVALIDATED and old.metadata["invalidated_by"] == globex.id
    edge = services.edges.get(Scope(T, U), acme.id, RelationType.INVALIDATED_BY, globex.id)
    assert edge is not None and edge.properties["reason"] == "corrected by the user"
    assert globex.metadata["correction"] is True and globex.status is MemoryStatus.ACTIVE
    # recall keeps to what is true now; the old fact is still there as history
    hits = services.recall.recall(Scope(T, U), services_recall_query("where does the user work"))
    assert globex.id in [h.memory.id for h in hits] and acme.id not in [h.memory.id for h in hits]


def services_recall_query(text: str) -> Any:
    from rapport.domain.recall import RecallQuery

    return RecallQuery(query=text, domain=DomainFilter.USER, limit=10)


def test_importance_routes_to_a_tier(services: Services) -> None:
    memories = contents(record(services, DEBUGGING, session_id="s-1"))
    tiers = {m.content: m.tier.value for m in memories.values()}
    # 0.5 in a session: the session's working memory; above 0.5: short-term
    assert tiers["User is debugging an API at work"] == "working"
    assert tiers["Step-by-step logging worked well with this user"] == "short_term"


# --- idempotency and failure -----------------------------------------------------------------------------------------


def _partition(services: Services) -> list[tuple[str, str]]:
    memories = services.memories.list_memories(
        Scope(T, U), domain=DomainFilter.BOTH, memory_type=None, limit=100, cursor=None
    )
    decisions = services.filter_decisions.list(Scope(T, U), limit=100, cursor=None)
    return sorted([("memory", m.id) for m in memories.items] + [("decision", d.id) for d in decisions.items])


def test_running_the_pipeline_again_for_an_interaction_changes_nothing(services: Services) -> None:
    recorded = record(services, DEBUGGING)
    before = _partition(services)
    request = PipelineRequest(tenant_id=T, user_id=U, interaction_id=recorded.interaction.id)
    again = services.pipeline.run(request)
    assert again.skipped is True and again.stored == recorded.pipeline.outcome.stored  # type: ignore[union-attr]
    assert _partition(services) == before


def test_a_failed_store_writes_nothing_and_a_rerun_completes(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    def embeddings_down(texts: list[str]) -> list[list[float]]:
        raise UpstreamError("OpenAI embeddings failed after 5 attempts: HTTP 503")

    recorded_ok = record(services, [("user", "hello")])  # episodes need the embedder: record first
    assert recorded_ok.pipeline is not None
    interaction = record(services, DEBUGGING)  # its pipeline works…
    before = _partition(services)
    request = PipelineRequest(tenant_id=T, user_id=U, interaction_id=interaction.interaction.id)
    # …pretend it never completed, and the embedder is down for the rerun
    run_item = services.items.get_item(_scope(), "PIPELINE", interaction.interaction.id)
    assert run_item is not None
    services.items.put_item(
        _scope(),
        "PIPELINE",
        interaction.interaction.id,
        {**run_item.body, "status": "running"},
        now=services.clock.now(),
    )
    monkeypatch.setattr(services.embedder, "embed", embeddings_down)
    with pytest.raises(UpstreamError):
        services.pipeline.run(request)
    failed = services.items.get_item(_scope(), "PIPELINE", interaction.interaction.id)
    assert failed is not None and failed.body["status"] == "failed" and "HTTP 503" in failed.body["error"]
    assert _partition(services) == before
    monkeypatch.undo()
    rerun = services.pipeline.run(request)
    assert rerun.skipped is False and sorted(rerun.stored) == sorted(interaction.pipeline.outcome.stored)  # type: ignore[union-attr]
    assert _partition(services) == before


def _scope() -> Any:
    from rapport.ports.items import ItemScope

    return ItemScope(tenant_id=T, user_id=U)


def test_a_pipeline_failure_is_reported_and_the_history_kept(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    def throttled(**_: Any) -> Any:
        raise UpstreamError("OpenAI chat failed after 5 attempts: HTTP 429")

    monkeypatch.setattr(services.language_model, "structured", throttled)
    recorded = record(services, DEBUGGING)
    assert recorded.pipeline is not None and recorded.pipeline.status == "failed"
    assert "HTTP 429" in (recorded.pipeline.error or "")
    assert services.interactions.get(Scope(T, U), recorded.interaction.id).id == recorded.interaction.id


# --- the fallback when the model's answers do not validate -----------------------------------------------------------


class _BrokenModel:
    """A model whose structured answers never validate (as a misbehaving LLM), so the rules stand in."""

    name = "openai:broken"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def structured(self, *, system: str, user: str, response_model: type[BaseModel]) -> BaseModel:
        self.asked.append(response_model.__name__)
        raise InvalidModelOutputError("the model's answer is not a valid UserExtraction (3 errors)")

    def reply(self, *, system: str, messages: list[Message]) -> str | None:
        return "hi"


def test_invalid_model_output_is_retried_once_then_the_rules_answer_and_say_so(services: Services) -> None:
    broken = _BrokenModel()
    with_broken = build_services(
        services.settings,
        clock=services.clock,
        store=services.store,
        index=services.index,
        embedder=services.embedder,
        language_model=broken,  # type: ignore[arg-type]
    )
    recorded = record(with_broken, DEBUGGING)
    memories = contents(recorded)
    # extract user, extract relational and the filter: each asked twice (other features may ask it other things)
    for prompt in ("UserExtraction", "RelationalExtraction", "FilterJudgement"):
        assert broken.asked.count(prompt) == 2, broken.asked
    assert "User is debugging an API at work" in memories
    for memory in memories.values():
        assert any("openai:broken" in reason for reason in memory.metadata["fallback"])
    decision = with_broken.filter_decisions.list(Scope(T, U), limit=1, cursor=None).items[0]
    assert decision.decided_by == "rules" and decision.fallback_reason and "openai:broken" in decision.fallback_reason


# --- the API ---------------------------------------------------------------------------------------------------------


@pytest.fixture
def call(services: Services):  # type: ignore[no-untyped-def]
    app = create_lambda_app(services)

    def _call(method: str, url: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
        response = app.resolve(rest_event(method, url, body, **kw), FakeLambdaContext())
        payload = response["body"]
        return response["statusCode"], (json.loads(payload) if payload else None)

    return _call


def _messages(turns: list[tuple[str, str]]) -> dict[str, Any]:
    return {"messages": [{"role": role, "content": content} for role, content in turns]}


def test_the_interaction_response_carries_the_pipelines_memories(call) -> None:  # type: ignore[no-untyped-def]
    status, body = call("POST", "/v1/users/u1/interactions", _messages(DEBUGGING))
    assert status == 201 and body["pipeline"]["status"] == "completed"
    assert "User is debugging an API at work" in [m["content"] for m in body["pipeline"]["memories"]]
    assert len(body["pipeline"]["stored"]) == len(body["pipeline"]["memories"])
    assert len(body["pipeline"]["filter_decisions"]) >= len(body["pipeline"]["stored"])
    assert all("embedding" not in m and "tenant_id" not in m for m in body["pipeline"]["memories"])


def test_wait_false_returns_at_once_and_the_memories_follow(call, services: Services) -> None:  # type: ignore[no-untyped-def]
    status, body = call("POST", "/v1/users/u1/interactions?wait=false", _messages(DEBUGGING))
    assert status == 201 and body["pipeline"]["status"] == "started" and body["pipeline"]["memories"] == []
    trigger = services.pipeline_trigger
    assert isinstance(trigger, InProcessPipeline)
    trigger.drain(timeout=30)
    listed = call("GET", "/v1/users/u1/memories?domain=relational&limit=20")[1]["memories"]
    assert any(m["type"] == "collaboration_outcome" for m in listed)


def test_filter_decisions_are_listed_and_a_blocked_one_can_be_restored(call) -> None:  # type: ignore[no-untyped-def]
    call("POST", "/v1/users/u1/interactions", _messages(SNAPPING))
    call("POST", "/v1/users/u1/interactions", _messages(CONFUSED))

    status, listed = call("GET", "/v1/users/u1/filter-decisions?limit=50")
    assert status == 200
    verdicts = {d["verdict"] for d in listed["decisions"]}
    assert {"blocked", "reframed"} <= verdicts
    assert all(d["reason"] for d in listed["decisions"])
    (blocked,) = call("GET", "/v1/users/u1/filter-decisions?verdict=blocked")[1]["decisions"]
    assert blocked["original"] == "User was frustrated with me"

    status, restored = call("POST", f"/v1/users/u1/filter-decisions/{blocked['id']}/restore")
    assert status == 200 and restored["memory"]["content"] == "User was frustrated with me"
    assert restored["decision"]["restored_memory_id"] == restored["memory"]["id"]
    # restoring again stores nothing new
    again = call("POST", f"/v1/users/u1/filter-decisions/{blocked['id']}/restore")[1]
    assert again["memory"]["id"] == restored["memory"]["id"]
    assert (
        call("GET", f"/v1/users/u1/filter-decisions/{blocked['id']}")[1]["restored_memory_id"] == again["memory"]["id"]
    )
    frustrated = [
        m
        for m in call("GET", "/v1/users/u1/memories?limit=100")[1]["memories"]
        if m["content"] == "User was frustrated with me"
    ]
    assert len(frustrated) == 1

    (reframed,) = call("GET", "/v1/users/u1/filter-decisions?verdict=reframed")[1]["decisions"]
    status, restored = call("POST", f"/v1/users/u1/filter-decisions/{reframed['id']}/restore")
    assert status == 200 and restored["memory"]["content"] == "User got confused by my technical explanation"


def test_an_allowed_or_unknown_or_foreign_decision_cannot_be_restored(call) -> None:  # type: ignore[no-untyped-def]
    call("POST", "/v1/users/u1/interactions", _messages(DEBUGGING))
    allowed = call("GET", "/v1/users/u1/filter-decisions?verdict=allowed&limit=1")[1]["decisions"][0]
    assert call("POST", f"/v1/users/u1/filter-decisions/{allowed['id']}/restore")[0] == 409
    assert call("POST", "/v1/users/u1/filter-decisions/01J0000000000000000000NONE/restore")[0] == 404
    assert call("POST", f"/v1/users/u1/filter-decisions/{allowed['id']}/restore", tenant="tenant-b")[0] == 404
    assert call("GET", "/v1/users/u1/filter-decisions", tenant="tenant-b")[1]["decisions"] == []
    assert call("GET", "/v1/users/u1/filter-decisions?limit=0")[0] == 400


def test_the_rule_based_model_is_the_default_without_a_key(services: Services) -> None:
    assert isinstance(services.language_model, RulesLanguageModel)
    assert services.pipeline.extract.fallback is None and services.pipeline.constructive_filter.fallback is None


@pytest.mark.parametrize(
    ("messages", "status"),
    [
        ([{"role": "assistant", "content": "Anything else?"}], 400),  # no user message
        ([{"role": "user", "content": "   "}], 400),  # nothing said
        ([{"role": "user", "content": "hi"}] * 201, 400),  # too many messages
        ([{"role": "user", "content": "x" * 16_001}], 400),  # one message too long
        ([{"role": "user", "content": "y" * 15_999}] * 6, 400),  # the whole too long
        ([{"role": "robot", "content": "beep"}], 422),  # unknown role
    ],
    ids=["no-user-message", "blank", "too-many-messages", "long-message", "long-interaction", "unknown-role"],
)
def test_a_bad_interaction_is_a_4xx_and_starts_no_pipeline(call, messages: list[dict[str, str]], status: int) -> None:  # type: ignore[no-untyped-def]
    got, body = call("POST", "/v1/users/u1/interactions", {"messages": messages})
    assert got == status and body["message"]
    assert call("GET", "/v1/users/u1/history")[1]["interactions"] == []
    assert call("GET", "/v1/users/u1/filter-decisions")[1]["decisions"] == []
    assert call("GET", "/v1/users/u1/memories")[1]["total_stored"] == 0


def test_the_pipelines_edges_carry_only_their_types_properties(services: Services) -> None:
    from rapport.domain.relations import type_properties

    recorded = record(services, DEBUGGING)
    again = record(services, [("user", "I'm getting a 500 on /users again at work")])  # a reinforcement
    assert again.pipeline is not None and again.pipeline.outcome is not None and again.pipeline.outcome.reinforced
    ids = [*recorded.pipeline.outcome.stored, recorded.interaction.id, again.interaction.id]  # type: ignore[union-attr]
    edges = [e for node in ids for e in services.edges.outgoing(Scope(T, U), node)]
    assert {e.type for e in edges} >= {RelationType.DERIVED_FROM, RelationType.RELATES_TO, RelationType.REINFORCES}
    for edge in edges:
        assert type_properties(edge.type, edge.properties) == edge.properties


def test_a_pipeline_that_cannot_start_is_reported_and_the_history_kept(services: Services) -> None:
    from moto import mock_aws

    from rapport.adapters.aws.step_functions import StepFunctionsPipeline

    with mock_aws():
        missing = "arn:aws:states:us-east-1:123456789012:stateMachine:missing"
        unstartable = build_services(
            services.settings,
            clock=services.clock,
            store=services.store,
            index=services.index,
            embedder=services.embedder,
            pipeline_trigger=StepFunctionsPipeline(missing, region_name="us-east-1"),
        )
        recorded = record(unstartable, DEBUGGING)
    assert recorded.pipeline is not None and recorded.pipeline.status == "failed"
    assert "could not start the ingestion pipeline: StateMachineDoesNotExist" in (recorded.pipeline.error or "")
    assert services.interactions.get(Scope(T, U), recorded.interaction.id).messages[0].content == DEBUGGING[0][1]


def test_the_graph_hears_of_the_memories_the_pipeline_creates(services: Services) -> None:
    from rapport.composition.pipeline import build_pipeline

    heard: list[list[str]] = []

    class Recorder:
        def memories_stored(self, scope: Scope, memories: list[Any]) -> None:
            heard.append([m.id for m in memories])

    from rapport.services.memories import MemoryService

    memories = MemoryService(
        services.store,
        services.index,
        services.embedder,
        services.settings,
        services.clock,
        graph=Recorder(),  # type: ignore[arg-type]
    )
    runner = build_pipeline(
        settings=services.settings,
        clock=services.clock,
        store=services.store,
        items=services.items,
        index=services.index,
        embedder=services.embedder,
        memories=memories,
        language_model=services.language_model,
    ).runner
    overheard = build_services(
        services.settings,
        clock=services.clock,
        store=services.store,
        index=services.index,
        embedder=services.embedder,
        pipeline_trigger=InProcessPipeline(runner, services.store),
    )
    recorded = record(overheard, DEBUGGING)
    assert recorded.pipeline is not None and recorded.pipeline.outcome is not None
    assert heard == [recorded.pipeline.outcome.stored]


def test_reinforcement_adds_to_the_strength_left_today(services: Services) -> None:
    first = contents(record(services, [("user", "I prefer morning meetings")]))["User prefers morning meetings"]
    # Given: sixty days pass without the memory being used, so its strength has decayed since it was stored
    services.clock.set(services.clock.now() + timedelta(days=60))
    stored = services.store.get_memory(Scope(T, U), first.id)
    left = effective_strength(stored, services.clock.now(), services.settings.governance)
    assert left < stored.strength - 0.2

    record(services, [("user", "As I said, I prefer morning meetings.")])

    # Then: the step is added to what is left, not to the stale stored value, and the decay restarts from now
    memory = services.memories.get(Scope(T, U), first.id)
    assert memory.strength == pytest.approx(left + services.settings.pipeline_reinforcement_step)
    assert memory.last_reinforced_at == services.clock.now() and memory.decayed_at is None


def test_two_pipelines_reinforcing_one_memory_at_once_both_count(services: Services) -> None:
    first = contents(record(services, [("user", "I prefer morning meetings")]))["User prefers morning meetings"]
    before = services.store.get_memory(Scope(T, U), first.id)
    real_get = services.store.get_memories
    raced = {"done": False}

    def get_then_race(scope: Scope, memory_ids: Any) -> Any:
        # Another pipeline reinforces the memory between this one's read (de-duplication) and its write (once)
        found = real_get(scope, memory_ids)
        if any(m.id == first.id for m in found) and not raced["done"]:
            raced["done"] = True
            memory = next(m for m in found if m.id == first.id)
            other = memory.model_copy(
                update={
                    "strength": 0.5,
                    "last_reinforced_at": services.clock.now() - timedelta(seconds=1),
                    "metadata": {**memory.metadata, "observations": 2, "reinforced_by": ["other-interaction"]},
                }
            )
            services.store.put_memory(other)
        return found

    with patch.object(services.store, "get_memories", get_then_race):
        again = record(services, [("user", "As I said, I prefer morning meetings.")])

    # Then: this pipeline's write met the other one's, read it again and counted on top of it
    assert again.pipeline is not None and again.pipeline.outcome is not None
    assert again.pipeline.outcome.reinforced == [first.id]
    memory = services.memories.get(Scope(T, U), first.id)
    assert memory.metadata["observations"] == 3 and memory.metadata["reinforced_by"][0] == "other-interaction"
    assert memory.strength == pytest.approx(0.5 + services.settings.pipeline_reinforcement_step)
    assert before.metadata["observations"] == 1


def test_a_run_in_flight_does_not_bring_back_a_user_erased_meanwhile(services: Services) -> None:
    # Given: the user is erased while the pipeline's store step waits on the embedding call (the second embed call;
    # the first embeds the episodes when the interaction is recorded)
    real_embed = services.embedder.embed
    calls = {"n": 0}

    def embed_while_erasing(texts: list[str]) -> list[list[float]]:
        calls["n"] += 1
        vectors = real_embed(texts)
        if calls["n"] == 2:
            services.privacy.erase_user(Scope(T, U), actor="test")
        return vectors

    with patch.object(services.embedder, "embed", embed_while_erasing):
        recorded = record(services, [("user", "I prefer morning meetings")])

    # Then: the run fails for good (the interaction is gone) and writes nothing back
    assert calls["n"] == 2 and recorded.pipeline is not None
    assert recorded.pipeline.status.value == "failed" and "not found" in (recorded.pipeline.error or "")
    assert services.memories.count(Scope(T, U)) == 0
    assert U not in services.store.list_users(T, limit=10).items

"""Two assistants of one tenant with one person, on both stores: each keeps its own relationship (relational
memories, state, sessions, decisions), and both read the same facts, people and history."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from boto3.dynamodb.conditions import Key

from rapport.adapters.dynamodb.store import DynamoDbMemoryStore
from rapport.adapters.local.embedded_index import EmbeddedVectorIndex
from rapport.adapters.local.hashing_embedder import HashingEmbedder
from rapport.adapters.local.sqlite_store import SqliteMemoryStore
from rapport.clock import FixedClock
from rapport.composition.services import Services, build_services
from rapport.domain.models import Domain, DomainFilter, Message, MessageRole
from rapport.domain.recall import RecallQuery
from rapport.domain.relational_state import RelationalEvent
from rapport.domain.scope import Scope
from rapport.errors import InvalidInputError, NotFoundError
from rapport.services.interactions import NewInteraction
from rapport.services.memories import NewMemory
from rapport.settings import Settings
from tests.integration.conftest import TABLE_NAME

pytestmark = pytest.mark.integration

T, U = "tenant-a", "dana"
DEFAULT = Scope(T, U)
CODER = Scope.of(T, U, "coder")
SUPPORT = Scope.of(T, U, "support")


@pytest.fixture(params=["dynamodb", "sqlite"])
def stack(request: pytest.FixtureRequest, settings: Settings, clock: FixedClock) -> Iterator[Services]:
    embedder = HashingEmbedder(settings.hashing_dimensions)
    store: DynamoDbMemoryStore | SqliteMemoryStore
    if request.param == "dynamodb":
        store = DynamoDbMemoryStore(TABLE_NAME, dynamodb_resource=request.getfixturevalue("moto_dynamodb"))
    else:
        store = SqliteMemoryStore(settings.sqlite_path)
    index = EmbeddedVectorIndex(settings.embedded_index_path, embedder.dimensions)
    built = build_services(settings, clock=clock, store=store, index=index, embedder=embedder)
    yield built
    index.close()
    if isinstance(store, SqliteMemoryStore):
        store.close()


def note(services: Services, scope: Scope, content: str, domain: Domain = Domain.RELATIONAL) -> str:
    return services.memories.remember(scope, NewMemory(content=content, domain=domain)).id


def listed(services: Services, scope: Scope, domain: DomainFilter = DomainFilter.BOTH) -> set[str]:
    page = services.memories.list_memories(scope, domain=domain, memory_type=None, limit=100, cursor=None)
    return {m.content for m in page.items}


def said(services: Services, scope: Scope, text: str, session_id: str | None = None) -> None:
    services.interactions.record(
        scope,
        NewInteraction(
            messages=[Message(role=MessageRole.USER, content=text), Message(role=MessageRole.ASSISTANT, content="Ok.")],
            session_id=session_id,
        ),
    )


def test_each_assistant_keeps_its_own_relational_notes_and_reads_the_shared_facts(stack: Services) -> None:
    # Given: a fact told to the coding assistant, and a relational note of each assistant
    fact = note(stack, CODER, "Works at Acme on the billing API", Domain.USER)
    coder_note = note(stack, CODER, "We fixed the CORS issue together by pairing on the proxy config")
    support_note = note(stack, SUPPORT, "Prefers short answers with a link to the docs")
    default_note = note(stack, DEFAULT, "Likes to be greeted by name")

    # Then: each lists the fact and its own note only, in every listing path (both domains, one domain, one type)
    assert listed(stack, CODER) == {"Works at Acme on the billing API", stack.memories.get(CODER, coder_note).content}
    assert listed(stack, SUPPORT, DomainFilter.RELATIONAL) == {"Prefers short answers with a link to the docs"}
    assert listed(stack, DEFAULT, DomainFilter.RELATIONAL) == {"Likes to be greeted by name"}
    assert listed(stack, SUPPORT, DomainFilter.USER) == {"Works at Acme on the billing API"}
    by_type = stack.memories.list_memories(
        SUPPORT, domain=DomainFilter.RELATIONAL, memory_type="shared_context", limit=10, cursor=None
    )
    assert [m.id for m in by_type.items] == [support_note]
    # and another assistant's note is not found by id, nor changed or deleted through it
    for scope, other in ((SUPPORT, coder_note), (CODER, support_note), (DEFAULT, coder_note), (CODER, default_note)):
        with pytest.raises(NotFoundError):
            stack.memories.get(scope, other)
        with pytest.raises(NotFoundError):
            stack.memories.delete(scope, other)
    assert stack.memories.get(SUPPORT, fact).agent_id == "coder"  # a fact keeps who heard it, and is everyone's
    assert stack.memories.get(CODER, coder_note).agent_id == "coder"


def test_recall_of_both_domains_mixes_the_facts_with_this_assistants_notes_only(stack: Services) -> None:
    note(stack, DEFAULT, "The user deploys the billing service with Terraform", Domain.USER)
    note(stack, CODER, "Terraform plans are reviewed together before the billing deploy")
    note(stack, SUPPORT, "Terraform questions about billing go to the docs link")

    def recalled(scope: Scope) -> set[str]:
        hits = stack.recall.recall(scope, RecallQuery(query="terraform billing deploy", domain=DomainFilter.BOTH))
        return {h.memory.content for h in hits}

    assert recalled(CODER) == {
        "The user deploys the billing service with Terraform",
        "Terraform plans are reviewed together before the billing deploy",
    }
    assert recalled(SUPPORT) == {
        "The user deploys the billing service with Terraform",
        "Terraform questions about billing go to the docs link",
    }
    assert recalled(DEFAULT) == {"The user deploys the billing service with Terraform"}


def test_a_grudge_with_one_assistant_does_not_touch_the_other(stack: Services) -> None:
    # Given: the person snaps at the support bot, twice, and reports a broken promise of it
    said(stack, SUPPORT, "WHY IS THIS STILL BROKEN? THIS IS RIDICULOUS!!")
    said(stack, SUPPORT, "Why is this still broken, this is ridiculous.")
    stack.relational_state.report_event(SUPPORT, RelationalEvent.BROKEN_PROMISE, "missed the callback")
    # and has a calm talk with the coding assistant
    said(stack, CODER, "Hi, I am setting up the new build server today.")

    support, coder, untouched = (stack.relational_state.read(s) for s in (SUPPORT, CODER, DEFAULT))
    initial = stack.relational_state.read(Scope.of(T, U, "never-met"))
    assert support.grudge > 0.2 and support.trust < coder.trust
    assert coder.grudge == initial.grudge and coder.familiarity > initial.familiarity
    assert untouched == initial  # the default assistant was never part of it
    assert [e.note for e in stack.relational_state.events(SUPPORT, limit=10, cursor=None).items] == [
        "missed the callback"
    ]
    assert stack.relational_state.events(CODER, limit=10, cursor=None).items == []
    # the history is shared, each interaction naming who took part
    history = stack.interactions.history(CODER, limit=10, cursor=None).items
    assert [i.agent_id for i in history] == ["coder", "support", "support"]


def test_sessions_are_each_assistants_own(stack: Services) -> None:
    said(stack, CODER, "Let us look at the flaky integration test.", session_id="s-1")
    said(stack, SUPPORT, "How do I reset my password?", session_id="s-1")
    coder_turns = [t.content for t in stack.sessions.context(CODER, "s-1").turns]
    support_turns = [t.content for t in stack.sessions.context(SUPPORT, "s-1").turns]
    assert (
        "Let us look at the flaky integration test." in coder_turns and "How do I reset my password?" not in coder_turns
    )
    assert "How do I reset my password?" in support_turns
    with pytest.raises(NotFoundError):
        stack.sessions.context(DEFAULT, "s-1")


def test_the_pipeline_writes_an_interactions_relational_memories_to_its_assistant(stack: Services) -> None:
    debugging = [
        ("user", "I'm getting a 500 on /users again. It's our main API at work."),
        ("assistant", "Let's add step-by-step logging around the request handlers to see where it fails."),
        ("user", "OK, the logs show the auth middleware throws before the handler runs."),
        ("assistant", "Then the auth layer is the root cause: check how the token is validated."),
        ("user", "That was it, it was the auth middleware, thanks — the step-by-step logging really helped"),
    ]
    messages = [Message(role=MessageRole(role), content=text) for role, text in debugging]
    recorded = stack.interactions.record(CODER, NewInteraction(messages=messages))
    assert recorded.pipeline is not None and recorded.pipeline.status == "completed"
    relational = stack.memories.list_memories(
        CODER, domain=DomainFilter.RELATIONAL, memory_type=None, limit=50, cursor=None
    ).items
    assert relational and all(m.agent_id == "coder" for m in relational)
    assert listed(stack, SUPPORT, DomainFilter.RELATIONAL) == set()
    assert listed(stack, SUPPORT, DomainFilter.USER) == listed(stack, CODER, DomainFilter.USER)
    # the filter's decisions about the coder's relational memories are the coder's; those about facts are shared
    coder_decisions = stack.filter_decisions.list(CODER, limit=50, cursor=None).items
    support_decisions = stack.filter_decisions.list(SUPPORT, limit=50, cursor=None).items
    assert any(d.domain is Domain.RELATIONAL for d in coder_decisions)
    assert support_decisions and all(d.domain is Domain.USER for d in support_decisions)
    relational_decision = next(d for d in coder_decisions if d.domain is Domain.RELATIONAL)
    with pytest.raises(NotFoundError):
        stack.filter_decisions.get(SUPPORT, relational_decision.id)


def test_the_tenant_lists_its_assistants_with_counts(stack: Services) -> None:
    note(stack, CODER, "Pairing on the proxy config worked")
    note(stack, CODER, "Likes diffs before explanations")
    note(stack, Scope.of(T, "erin", "coder"), "Reviews happen on Fridays")
    note(stack, SUPPORT, "Prefers links to the docs")
    said(stack, Scope.of(T, U, "intake"), "Hello there, first visit.")  # named, no relational memory yet
    note(stack, Scope.of("tenant-b", U, "elsewhere"), "Another tenant's assistant")

    agents = {a.agent_id: a for a in stack.assistants.list(T)}
    assert list(agents) == ["default", "coder", "intake", "support"]
    assert (agents["coder"].people, agents["coder"].relational_memories) == (2, 3)
    assert (agents["support"].people, agents["support"].relational_memories) == (1, 1)
    assert (agents["intake"].people, agents["intake"].relational_memories) == (0, 0)
    assert agents["default"].default and agents["default"].first_seen is None
    assert agents["coder"].first_seen is not None


def test_erasure_removes_every_assistants_relationship_and_says_how_much(stack: Services) -> None:
    note(stack, DEFAULT, "Has a dog named Max", Domain.USER)
    note(stack, CODER, "Pairing on the proxy config worked")
    note(stack, SUPPORT, "Prefers links to the docs")
    note(stack, SUPPORT, "Asked twice about invoices")
    said(stack, SUPPORT, "This is so frustrating.", session_id="s-9")
    stack.relational_state.report_event(CODER, RelationalEvent.PROMISE_KEPT)

    counts, event = stack.privacy.erase_user(SUPPORT, actor="test")  # any assistant's scope erases the person

    assert counts.agents["coder"].relational_memories == 1
    assert counts.agents["support"].relational_memories == 2
    assert counts.agents["coder"].items >= 2  # its state and the event
    assert counts.agents["support"].items >= 2  # its state and its session
    assert event.agents == counts.by_agent()
    (stored,) = stack.privacy.audit_log(T, limit=5, cursor=None).items
    assert stored.agents == counts.by_agent()
    for scope in (DEFAULT, CODER, SUPPORT):
        assert listed(stack, scope) == set()
        assert stack.relational_state.stored(scope) == stack.relational_state.stored(Scope.of(T, U, "never-met"))
    assert stack.index.relationship_tallies(T) == {}


def test_export_and_import_carry_each_assistants_part(stack: Services) -> None:
    note(stack, DEFAULT, "Has a dog named Max", Domain.USER)
    note(stack, CODER, "Pairing on the proxy config worked")
    note(stack, DEFAULT, "Likes to be greeted by name")
    said(stack, SUPPORT, "WHY IS THIS STILL BROKEN? THIS IS RIDICULOUS!!")
    page = stack.user_export.page(CODER)
    states = [line for line in page.lines if line["kind"] == "state"]
    assert sorted(s["agent_id"] for s in states) == ["support"]
    memories = {line["content"]: line["agent_id"] for line in page.lines if line["kind"] == "memory"}
    assert memories["Pairing on the proxy config worked"] == "coder"
    assert memories["Likes to be greeted by name"] == "default"

    # When: the file is imported as another person
    moved = Scope(T, "dana-2")
    result = stack.user_import.import_text(moved, page.ndjson())
    assert not result.errors
    assert listed(stack, moved.for_agent("coder"), DomainFilter.RELATIONAL) == {"Pairing on the proxy config worked"}
    assert listed(stack, moved, DomainFilter.RELATIONAL) == {"Likes to be greeted by name"}
    assert stack.relational_state.read(moved.for_agent("support")) == stack.relational_state.read(SUPPORT)
    assert stack.relational_state.stored(moved.for_agent("coder")) == stack.relational_state.stored(moved)


def test_an_import_line_naming_a_bad_assistant_is_reported(stack: Services) -> None:
    header = {"kind": "header", "format": "rapport-export", "version": 1}
    bad = {"kind": "state", "agent_id": "Not A Slug", "trust": 0.5}
    result = stack.user_import.import_text(DEFAULT, "\n".join(json.dumps(x) for x in (header, bad)))
    assert [e.error for e in result.errors] == ["invalid_line"]


def test_an_assistant_id_is_a_checked_slug() -> None:
    for bad in ("", "Coach", "a#b", "-lead", "x" * 65, "two words"):
        with pytest.raises(InvalidInputError):
            Scope.of(T, U, bad)
    assert Scope.of(T, U).agent_id == "default" and Scope.of(T, U, "support_bot-2").agent_id == "support_bot-2"


# --- what a client that never names an assistant sees: the layout it always had ------------------------------------


def table_items(moto_dynamodb: Any, scope: Scope) -> dict[str, dict[str, Any]]:
    table = moto_dynamodb.Table(TABLE_NAME)
    items = table.query(KeyConditionExpression=Key("pk").eq(f"TENANT#{scope.tenant_id}#USER#{scope.user_id}"))
    return {item["sk"]: item for item in items["Items"]}


def test_the_default_assistant_keeps_the_key_layout_items_already_stored_have(
    settings: Settings, clock: FixedClock, moto_dynamodb: Any
) -> None:
    embedder = HashingEmbedder(settings.hashing_dimensions)
    store = DynamoDbMemoryStore(TABLE_NAME, dynamodb_resource=moto_dynamodb)
    index = EmbeddedVectorIndex(settings.embedded_index_path, embedder.dimensions)
    services = build_services(settings, clock=clock, store=store, index=index, embedder=embedder)
    default_id = note(services, DEFAULT, "Likes to be greeted by name")
    coder_id = note(services, CODER, "Pairing on the proxy config worked")
    said(services, DEFAULT, "Hello again.", session_id="s-1")
    said(services, CODER, "Hello again.", session_id="s-1")

    items = table_items(moto_dynamodb, DEFAULT)
    default_memory, coder_memory = items[f"MEM#{default_id}"], items[f"MEM#{coder_id}"]
    assert default_memory["gsi1pk"] == f"TENANT#{T}#USER#{U}#DOMAIN#relational"
    assert default_memory["gsi2pk"] == f"TENANT#{T}#USER#{U}#TYPE#shared_context"
    assert "agent_id" not in default_memory["source"]
    assert coder_memory["gsi1pk"] == f"TENANT#{T}#USER#{U}#DOMAIN#relational#AGENT#coder"
    assert coder_memory["gsi2pk"] == f"TENANT#{T}#USER#{U}#TYPE#shared_context#AGENT#coder"
    assert coder_memory["source"]["agent_id"] == "coder"
    assert {"STATE", "SESSION#s-1", "AGENT_STATE#coder", "AGENT_SESSION#coder#s-1"} <= set(items)
    interactions = [i for sk, i in items.items() if sk.startswith("INT#")]
    assert sorted(i.get("agent_id", "-") for i in interactions) == ["-", "coder"]
    # an item of the layout before assistants had names (no assistant anywhere) reads as the default's
    assert services.memories.get(DEFAULT, default_id).agent_id == "default"
    index.close()

"""After an erasure, no string or id of that person remains in any file of the data directory: not in the tables,
not in the write-ahead logs, not in the vector file, and the audit event names them by a hash only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from boto3.dynamodb.types import Binary

from rapport.adapters.local.embedded_index import EmbeddedVectorIndex
from rapport.adapters.local.hashing_embedder import HashingEmbedder
from rapport.adapters.local.sqlite_store import SqliteMemoryStore
from rapport.composition.services import Services, build_services
from rapport.domain.models import Domain, Message, MessageRole
from rapport.domain.scope import Scope
from rapport.jobs.report import JobName
from rapport.services.interactions import NewInteraction
from rapport.services.memories import NewMemory
from rapport.settings import Settings
from tests.integration.conftest import TABLE_NAME
from tests.integration.test_write_path import dynamodb_services

GONE = Scope("tenant-a", "zed-erase-4821")
KEPT = Scope("tenant-a", "yara-keep-1193")
SECRETS = ["zed-erase-4821", "Quokka7731", "Bartholomew", "sess-9911-zed", "Marzipanfabrik"]


def local(settings: Settings, clock: object) -> tuple[Services, SqliteMemoryStore, EmbeddedVectorIndex]:
    embedder = HashingEmbedder(settings.hashing_dimensions)
    store = SqliteMemoryStore(settings.sqlite_path)
    index = EmbeddedVectorIndex(settings.embedded_index_path, embedder.dimensions)
    return build_services(settings, clock=clock, store=store, index=index, embedder=embedder), store, index  # type: ignore[arg-type]


def talk(services: Services, scope: Scope, words: str, session: str, friend: str, work: str) -> list[str]:
    said = [
        Message(role=MessageRole.USER, content=f"My friend {friend} loves {words}, and I work at the {work}"),
        Message(role=MessageRole.ASSISTANT, content=f"Noted: {words} for {friend}."),
    ]
    recorded = services.interactions.record(scope, NewInteraction(messages=said, session_id=session))
    memory = services.memories.remember(scope, NewMemory(content=f"Prefers {words} at lunch", domain=Domain.USER))
    turn = services.process.process(scope, f"Tell {friend} about {words}", session_id=session)
    services.turns.reply(scope, turn.turn_id, f"Sure, {words} it is.")
    return [recorded.interaction.id, memory.id, turn.turn_id, *recorded.interaction.memory_ids]


def _raw(value: Any) -> str:
    # Binary attributes (embeddings, packed bodies) are searched as their raw bytes, numbers as written.
    return bytes(value).decode("latin-1") if isinstance(value, Binary) else str(value)


def files_holding(directory: Path, needles: list[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        data = path.read_bytes()
        hits = [n for n in needles if n.encode() in data or n.encode("utf-16-le") in data]
        if hits:
            found[path.name] = hits
    return found


@pytest.fixture
def data_dir(settings: Settings) -> Path:
    return settings.data_dir


def test_no_trace_of_an_erased_person_in_any_file(settings: Settings, clock: object, data_dir: Path) -> None:
    services, store, index = local(settings, clock)
    ids = talk(services, GONE, "Quokka7731 sandwiches", "sess-9911-zed", "Bartholomew", "Marzipanfabrik")
    kept_ids = talk(services, KEPT, "plain toast", "sess-keep", "Wilhelmina", "Brickworks")
    for job in JobName:  # the jobs leave their own items (reports, summaries) about the person
        services.governance.run(job, GONE, clock.now())  # type: ignore[attr-defined]
    assert files_holding(data_dir, SECRETS)  # the person is on disk before

    counts, event = services.privacy.erase_user(GONE, actor="test")
    assert counts.memories > 0
    assert GONE.user_id not in event.model_dump_json()
    assert files_holding(data_dir, [*SECRETS, *ids]) == {}
    # The other person of the tenant is untouched
    assert services.store.get_interaction(KEPT, kept_ids[0]).id == kept_ids[0]

    # Nor after a stop and a start
    store.close()
    index.close()
    again, store, index = local(settings, clock)
    assert again.store.count_memories(GONE) == 0
    assert files_holding(data_dir, [*SECRETS, *ids]) == {}
    store.close()
    index.close()


def test_no_item_of_the_table_names_an_erased_person(settings: Settings, clock: object, moto_dynamodb: Any) -> None:
    services = dynamodb_services(settings, clock, moto_dynamodb)
    ids = talk(services, GONE, "Quokka7731 sandwiches", "sess-9911-zed", "Bartholomew", "Marzipanfabrik")
    talk(services, KEPT, "plain toast", "sess-keep", "Wilhelmina", "Brickworks")
    table = moto_dynamodb.Table(TABLE_NAME)

    def items_naming(needles: list[str]) -> list[str]:
        found = []
        for item in table.scan()["Items"]:
            text = json.dumps(item, default=_raw)
            found += [f"{item['pk']} {item['sk']}: {n}" for n in needles if n in text]
        return found

    assert items_naming(SECRETS)
    services.privacy.erase_user(GONE, actor="test")
    assert items_naming([*SECRETS, *ids]) == []
    assert items_naming(["yara-keep-1193"])  # the other person stays

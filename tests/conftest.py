"""Fixtures shared by every tier: settings in a temporary data directory, an injected clock, the local services."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from rapport.adapters.local.embedded_index import EmbeddedVectorIndex
from rapport.adapters.local.hashing_embedder import HashingEmbedder
from rapport.adapters.local.sqlite_store import SqliteMemoryStore
from rapport.clock import FixedClock
from rapport.composition.adapters import person_keyring
from rapport.composition.services import Services, build_services
from rapport.settings import EmbedderKind, EnrichmentMode, GraphSettings, Settings

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _no_real_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    # Nothing in tests may reach a real account; moto and fakes read these.
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    # Enrichment inline, so a test reads the links of what it just stored; tests of the background worker (the
    # local server's default) ask for it and wait with `services.graph.flush()`.
    return Settings(
        data_dir=tmp_path / "data",
        embedder=EmbedderKind.HASHING,
        hashing_dimensions=1024,
        graph=GraphSettings(enrichment=EnrichmentMode.INLINE),
    )


@pytest.fixture
def services(settings: Settings, clock: FixedClock) -> Iterator[Services]:
    """The local stack (SQLite + embedded index) with the hashing embedder: fast, deterministic, offline."""
    embedder = HashingEmbedder(settings.hashing_dimensions)
    # Sealed with the person keys as the local server's store is, so a CLI run over the same data directory reads it.
    store = SqliteMemoryStore(settings.sqlite_path, keyring=person_keyring(settings))
    index = EmbeddedVectorIndex(settings.embedded_index_path, embedder.dimensions)
    built = build_services(settings, clock=clock, store=store, index=index, embedder=embedder)
    yield built
    store.close()
    index.close()

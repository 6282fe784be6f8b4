"""Per-person keys on the local store: an end user's content is ciphertext in the SQLite file, the API still reads
it, and once they are erased a copy of the file taken before (a backup) no longer opens for them, while it still
opens for everyone else."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from rapport.adapters.local.embedded_index import EmbeddedVectorIndex
from rapport.adapters.local.hashing_embedder import HashingEmbedder
from rapport.adapters.local.person_keys import MASTER_KEY_FILE, LocalPersonKeys
from rapport.adapters.local.sqlite_store import SqliteMemoryStore
from rapport.composition.services import Services, build_services
from rapport.domain.models import Domain
from rapport.domain.scope import Scope
from rapport.errors import ErasedContentError
from rapport.ports.items import ItemQuery, ItemScope
from rapport.sealing import Keyring
from rapport.services.memories import NewMemory
from rapport.services.people import PERSON_KIND
from rapport.settings import Settings
from tests.integration.test_erasure_leaves_nothing import files_holding, talk

pytestmark = pytest.mark.integration

GONE = Scope("tenant-a", "zed-erase-4821")
KEPT = Scope("tenant-a", "yara-keep-1193")
# What the person said: their words and the place they named. The names of the people they mention become item
# keys (`PERSON#bartholomew`) and stay readable, as docs/security.md says; they are not searched for here.
WORDS = ["Quokka7731", "Marzipanfabrik"]
KEPT_WORDS = ["Wilhelmina", "Brickworks"]


def keyring(data_dir: Path) -> Keyring:
    return Keyring(LocalPersonKeys(data_dir / "keys"), ttl_seconds=60)


def local(settings: Settings, clock: object, ring: Keyring | None) -> tuple[Services, SqliteMemoryStore]:
    embedder = HashingEmbedder(settings.hashing_dimensions)
    store = SqliteMemoryStore(settings.sqlite_path, keyring=ring)
    index = EmbeddedVectorIndex(settings.embedded_index_path, embedder.dimensions)
    services = build_services(settings, clock=clock, store=store, index=index, embedder=embedder)  # type: ignore[arg-type]
    return services, store


def store_files(data_dir: Path) -> Path:
    """The store's file and its write-ahead log, without the vector index (which keeps the text it searches) and the
    keys directory: what a backup of the store holds."""
    only = data_dir.parent / f"{data_dir.name}-store-only"
    only.mkdir(exist_ok=True)
    for path in data_dir.glob("rapport.sqlite3*"):
        shutil.copy(path, only / path.name)
    return only


def test_content_is_ciphertext_at_rest_and_the_api_still_reads_it(settings: Settings, clock: object) -> None:
    services, _ = local(settings, clock, keyring(settings.data_dir))
    ids = talk(services, GONE, "Quokka7731 sandwiches", "sess-9911-zed", "Bartholomew", "Marzipanfabrik")

    # The API answers with the words
    assert "Quokka7731" in services.store.get_memory(GONE, ids[1]).content
    interaction = services.store.get_interaction(GONE, ids[0])
    assert "Marzipanfabrik" in interaction.messages[0].content
    people = services.people.list_people(GONE, limit=10, cursor=None).items
    assert any(person.name == "Bartholomew" for person in people)
    with_vector = services.store.get_memories(GONE, [ids[3]])[0]
    assert with_vector.embedding is not None and len(with_vector.embedding) == settings.hashing_dimensions

    # ...and no byte of the store's file or its log spells them, nor the names the person used
    assert files_holding(store_files(settings.data_dir), [*WORDS, "Bartholomew"]) == {}
    # The keys live apart, and name the person by a hash only
    keys_dir = settings.data_dir / "keys"
    assert (keys_dir / MASTER_KEY_FILE).stat().st_mode & 0o077 == 0
    assert files_holding(keys_dir, [GONE.user_id]) == {}
    # The control: without sealing, the same conversation is in the store's files in clear
    plain_settings = settings.model_copy(update={"data_dir": settings.data_dir.parent / "plain"})
    plain, _ = local(plain_settings, clock, None)
    talk(plain, GONE, "Quokka7731 sandwiches", "sess-9911-zed", "Bartholomew", "Marzipanfabrik")
    assert files_holding(store_files(plain_settings.data_dir), WORDS)


def test_erasure_destroys_the_key_and_a_backup_from_before_no_longer_opens(settings: Settings, clock: object) -> None:
    ring = keyring(settings.data_dir)
    services, _ = local(settings, clock, ring)
    gone_ids = talk(services, GONE, "Quokka7731 sandwiches", "sess-9911-zed", "Bartholomew", "Marzipanfabrik")
    kept_ids = talk(services, KEPT, "plain toast", "sess-keep", "Wilhelmina", "Brickworks")
    # A backup of the store taken before the erasure
    backup = settings.data_dir.parent / "backup.sqlite3"
    with sqlite3.connect(settings.sqlite_path) as source, sqlite3.connect(backup) as target:
        source.backup(target)

    services.privacy.erase_user(GONE, actor="test")

    # The key is gone from its file, bytes included (secure delete, the log checkpointed)
    assert LocalPersonKeys(settings.data_dir / "keys").load(*_who(GONE)) is None
    assert files_holding(settings.data_dir / "keys", [GONE.user_hash]) == {}
    # The backup still holds the person's rows, but they no longer open: not with this process's keys, not with a
    # fresh process's (nothing cached)
    for ring_now in (ring, keyring(settings.data_dir)):
        restored = SqliteMemoryStore(backup, keyring=ring_now)
        with pytest.raises(ErasedContentError):
            restored.get_memory(GONE, gone_ids[1])
        with pytest.raises(ErasedContentError):
            restored.get_interaction(GONE, gone_ids[0])
        with pytest.raises(ErasedContentError):
            restored.list_items(ItemScope.of_user(GONE), _people_query())
        # ...while everyone else's rows of the same backup open as before
        assert "toast" in restored.get_memory(KEPT, kept_ids[1]).content
        assert "Brickworks" in restored.get_interaction(KEPT, kept_ids[0]).messages[0].content
        assert restored.list_items(ItemScope.of_user(KEPT), _people_query()).items
        restored.close()


def test_rows_written_before_sealing_still_read(settings: Settings, clock: object) -> None:
    # Given a store written without per-person keys (an upgrade from before them)
    plain, plain_store = local(settings, clock, None)
    ids = talk(plain, KEPT, "plain toast", "sess-keep", "Wilhelmina", "Brickworks")
    plain_store.close()
    # When it is opened with them, the old rows read as they are, and new writes are sealed beside them
    services, _ = local(settings, clock, keyring(settings.data_dir))
    assert "toast" in services.store.get_memory(KEPT, ids[1]).content
    assert "Brickworks" in services.store.get_interaction(KEPT, ids[0]).messages[0].content
    assert any(p.name == "Wilhelmina" for p in services.people.list_people(KEPT, limit=10, cursor=None).items)
    added = services.memories.remember(KEPT, NewMemory(content="Collects Quokka7731 stamps", domain=Domain.USER))
    assert services.store.get_memory(KEPT, added.id).content == "Collects Quokka7731 stamps"
    with sqlite3.connect(settings.sqlite_path) as conn:
        (body,) = conn.execute("SELECT body FROM memories WHERE id=?", (added.id,)).fetchone()
    assert "Quokka7731" not in body and '"content":"enc:v1:' in body


def test_a_tampered_or_moved_ciphertext_is_refused(settings: Settings, clock: object) -> None:
    services, store = local(settings, clock, keyring(settings.data_dir))
    mine = services.memories.remember(GONE, NewMemory(content="Hates Quokka7731 films", domain=Domain.USER))
    theirs = services.memories.remember(KEPT, NewMemory(content="Loves toast", domain=Domain.USER))
    with sqlite3.connect(settings.sqlite_path) as conn:
        (body,) = conn.execute("SELECT body FROM memories WHERE id=?", (mine.id,)).fetchone()
        # One character of the ciphertext changed
        start = body.index('"content":"enc:v1:') + len('"content":"enc:v1:') + 10
        flipped = body[:start] + ("A" if body[start] != "A" else "B") + body[start + 1 :]
        conn.execute("UPDATE memories SET body=? WHERE id=?", (flipped, mine.id))
        # Another person's sealed content copied onto this person's row
        (their_body,) = conn.execute("SELECT body FROM memories WHERE id=?", (theirs.id,)).fetchone()
        moved = their_body.replace(KEPT.user_id, GONE.user_id).replace(theirs.id, "01MOVEDMOVEDMOVEDMOVEDMOVE")
        conn.execute(
            "INSERT INTO memories (tenant_id, user_id, id, domain, type, body) VALUES (?, ?, ?, 'user', 'fact', ?)",
            (GONE.tenant_id, GONE.user_id, "01MOVEDMOVEDMOVEDMOVEDMOVE", moved),
        )
    with pytest.raises(ErasedContentError, match="does not open"):
        store.get_memory(GONE, mine.id)
    with pytest.raises(ErasedContentError, match="does not open"):
        store.get_memory(GONE, "01MOVEDMOVEDMOVEDMOVEDMOVE")
    assert store.get_memory(KEPT, theirs.id).content == "Loves toast"


def _who(scope: Scope) -> tuple[str, str]:
    return scope.tenant_id, scope.user_id


def _people_query() -> ItemQuery:
    return ItemQuery(kind=PERSON_KIND, limit=10)

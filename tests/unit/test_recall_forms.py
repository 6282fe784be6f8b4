"""What recall keeps of each memory it reads whatever the query (its stems, its place): kept by the instance a store
shares, never carried over to another instance of the same memory."""

from __future__ import annotations

from datetime import UTC, datetime

from rapport.domain.models import Domain, Memory, Provenance, SourceKind
from rapport.domain.recall import place_of
from rapport.domain.rendering import search_text
from rapport.domain.text import term_set
from rapport.services.recall import _FormsByMemory

NOW = datetime(2024, 5, 8, 13, 56, tzinfo=UTC)


def memory(content: str, *, speaker: str = "Caroline", index: int = 3) -> Memory:
    return Memory(
        id="m1",
        tenant_id="t",
        user_id="u",
        domain=Domain.USER,
        type="episode",
        content=content,
        source=Provenance(kind=SourceKind.INTERACTION, interaction_id="i1", message_index=index, speaker=speaker),
        created_at=NOW,
        updated_at=NOW,
        occurred_at=NOW,
        last_reinforced_at=NOW,
    )


def test_the_forms_are_those_of_the_memory_as_read() -> None:
    # Given a memory from a conversation
    read = memory("I adopted a dog named Max?")

    # When recall reads its forms
    forms = _FormsByMemory().of(read)

    # Then they are its searchable stems and its place, as the rules compute them
    assert forms.stems == term_set(search_text(read))
    assert forms.place == place_of(read)
    assert forms.place.asks and forms.place.speaker == "Caroline"


def test_another_instance_of_the_same_memory_is_read_afresh() -> None:
    # Given forms kept for one instance
    forms = _FormsByMemory()
    before = memory("I adopted a dog named Max")
    assert "max" in forms.of(before).stems

    # When the memory changes (an update makes another instance with the same id)
    after = before.model_copy(update={"content": "I adopted a cat named Luna", "source": before.source})
    changed = forms.of(after)

    # Then its forms are the new content's, and the first instance still has its own
    assert "luna" in changed.stems and "max" not in changed.stems
    assert "max" in forms.of(before).stems


def test_kept_forms_are_bounded_and_a_memory_read_with_its_vector_is_not_kept() -> None:
    # Given a bounded keeper
    forms = _FormsByMemory(size=2)
    memories = [memory(f"message number {n}", index=n) for n in range(3)]

    # When more memories are read than it keeps, and one with its vector
    for read in memories:
        forms.of(read)
    forms.of(memory("with a vector").model_copy(update={"embedding": [0.1, 0.2]}))

    # Then it holds the newest two, and not the one read with its vector
    assert [kept for kept, _ in forms._kept.values()] == memories[1:]

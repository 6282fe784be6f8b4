"""How memories become vectors: one embedding call per batch, an episode blended with its reading in reply."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from rapport.domain.models import Interaction, Memory
from rapport.domain.rendering import embedding_text, reply_embedding_text
from rapport.domain.vectors import blend
from rapport.ports.embedder import Embedder


class EmbeddedAhead(Protocol):
    """Texts a later step will embed for an interaction (the rule model's sentences), embedded in the episodes' call so
    that step finds their vectors waiting instead of making calls of its own."""

    def texts_for(self, interaction: Interaction) -> list[str]: ...

    def keep(self, texts: Sequence[str], vectors: Sequence[Sequence[float]]) -> None: ...


def embed_memories(embedder: Embedder, memories: Sequence[Memory], reply_weight: float) -> list[list[float]]:
    """One vector per memory, from one embedder call. An episode with a preceding message gets
    blend(own text, preceding + own text, reply_weight); reply_weight 0 (or no preceding message) is the own text's
    vector alone, and costs no second text."""
    return embed_memories_with(embedder, memories, reply_weight, ())[0]


def embed_memories_with(
    embedder: Embedder, memories: Sequence[Memory], reply_weight: float, also: Sequence[str]
) -> tuple[list[list[float]], list[list[float]]]:
    """`embed_memories`, and the vectors of `also` from the same call."""
    if not memories and not also:
        return [], []
    texts = [embedding_text(m) for m in memories]
    replies: dict[int, int] = {}  # memory position -> position of its reply text in `texts`
    if reply_weight > 0:
        for position, memory in enumerate(memories):
            reply = reply_embedding_text(memory)
            if reply is not None:
                replies[position] = len(texts)
                texts.append(reply)
    extra = len(texts)
    texts.extend(also)
    vectors = embedder.embed(texts)
    own = [
        blend(vectors[position], vectors[replies[position]], reply_weight) if position in replies else vectors[position]
        for position in range(len(memories))
    ]
    return own, vectors[extra:]

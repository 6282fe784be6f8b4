"""How memories become vectors: one embedding call per batch, an episode blended with its reading in reply."""

from __future__ import annotations

from collections.abc import Sequence

from rapport.domain.models import Memory
from rapport.domain.rendering import embedding_text, reply_embedding_text
from rapport.domain.vectors import blend
from rapport.ports.embedder import Embedder


def embed_memories(embedder: Embedder, memories: Sequence[Memory], reply_weight: float) -> list[list[float]]:
    """One vector per memory, from one embedder call. An episode with a preceding message gets
    blend(own text, preceding + own text, reply_weight); reply_weight 0 (or no preceding message) is the own text's
    vector alone, and costs no second text."""
    if not memories:
        return []
    texts = [embedding_text(m) for m in memories]
    replies: dict[int, int] = {}  # memory position -> position of its reply text in `texts`
    if reply_weight > 0:
        for position, memory in enumerate(memories):
            reply = reply_embedding_text(memory)
            if reply is not None:
                replies[position] = len(texts)
                texts.append(reply)
    vectors = embedder.embed(texts)
    return [
        blend(vectors[position], vectors[replies[position]], reply_weight) if position in replies else vectors[position]
        for position in range(len(memories))
    ]

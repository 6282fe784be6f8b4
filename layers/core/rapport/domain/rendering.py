"""How a memory is rendered for embedding and keyword search: its content, plus who said it and when for episodes."""

from __future__ import annotations

from rapport.domain.models import Memory


def search_text(memory: Memory) -> str:
    """Speaker and date belong in the searchable text of an episode: questions name people and times."""
    parts: list[str] = []
    if memory.occurred_at is not None and memory.source.interaction_id is not None:
        parts.append(f"[{memory.occurred_at.strftime('%d %B %Y')}]")
    if memory.source.speaker:
        parts.append(f"{memory.source.speaker}:")
    parts.append(memory.content)
    return " ".join(parts)

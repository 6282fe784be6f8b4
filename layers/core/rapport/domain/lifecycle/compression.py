"""Compression rules: which weak, old memories are summarized, how they are grouped, and the extractive summary."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime

from rapport.domain.lifecycle.decay import days_between, effective_strength
from rapport.domain.lifecycle.derived import is_derived
from rapport.domain.models import Domain, Memory, MemoryStatus
from rapport.settings import GovernanceSettings


def compression_thresholds(domain: Domain, settings: GovernanceSettings) -> tuple[float, float]:
    """(minimum age in days, strength below which) for the domain: 7 days and 0.3 for user memories, 14 days and
    0.2 for relational ones."""
    if domain is Domain.USER:
        return settings.user_compress_after_days, settings.user_compress_below_strength
    return settings.relational_compress_after_days, settings.relational_compress_below_strength


def is_compressible(memory: Memory, now: datetime, settings: GovernanceSettings) -> bool:
    """Older than the domain's age (strictly) and weaker than its strength (strictly), and still active."""
    if memory.status is not MemoryStatus.ACTIVE or is_derived(memory):
        return False
    min_age, below = compression_thresholds(memory.domain, settings)
    return days_between(memory.created_at, now) > min_age and effective_strength(memory, now, settings) < below


def compression_groups(memories: Iterable[Memory], max_group: int) -> list[list[Memory]]:
    """Grouped by domain and type (relational ones by assistant too: each relationship is summarised on its own),
    oldest first, in chunks of at most `max_group`; the order is stable, so the same memories always make the same
    groups."""
    by_type: dict[tuple[str, str, str], list[Memory]] = defaultdict(list)
    for memory in memories:
        by_type[(memory.domain.value, memory.type, memory.relationship or "")].append(memory)
    groups: list[list[Memory]] = []
    for key in sorted(by_type):
        members = sorted(by_type[key], key=lambda m: (m.created_at, m.id))
        groups.extend(members[start : start + max_group] for start in range(0, len(members), max_group))
    return groups


def _label(memory_type: str, count: int) -> str:
    noun = memory_type.replace("_", " ")
    return f"{count} {noun} memor{'y' if count == 1 else 'ies'}"


def extractive_summary(memories: list[Memory], max_chars: int) -> str:
    """The members' own sentences, most important first, duplicates dropped, cut to `max_chars` with a count of
    what did not fit (the originals stay linked, so nothing is lost by cutting)."""
    ranked = sorted(memories, key=lambda m: (-m.importance, -m.strength, m.created_at, m.id))
    sentences: list[str] = []
    seen: set[str] = set()
    for memory in ranked:
        text = " ".join(memory.content.split()).rstrip(".")
        if text and text.lower() not in seen:
            seen.add(text.lower())
            sentences.append(text)
    head = f"Compressed {_label(memories[0].type, len(memories))}: " if memories else "Compressed: "
    kept: list[str] = []
    for position, sentence in enumerate(sentences):
        rest = len(sentences) - position - 1
        ending = f" (+{rest} more)." if rest else "."
        if len(head) + len("; ".join([*kept, sentence])) + len(ending) > max_chars:
            break
        kept.append(sentence)
    omitted = len(sentences) - len(kept)
    ending = f" (+{omitted} more)." if omitted else "."
    if not kept and sentences:
        # Not even the first sentence fits: keep its beginning rather than nothing.
        omitted -= 1
        ending = f" (+{omitted} more)." if omitted else "."
        room = max(max_chars - len(head) - len(ending) - 1, 1)
        kept = [sentences[0][:room] + "…"]
    return (head + "; ".join(kept) + ending)[:max_chars]

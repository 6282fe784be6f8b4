"""Pattern nodes: a key term that recurs across one end user's memories, which those memories EXEMPLIFY."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel, Field

from rapport.domain.scope import Scope
from rapport.domain.text import tokenize
from rapport.ports.items import ItemPut, ItemScope, ItemStore

PATTERN_KIND = "PATTERN"
PATTERN_PREFIX = "pattern:"
PATTERN_TYPE = "recurring_term"
# Words that recur in memories because of how memories are phrased ("User prefers…", "the assistant…"), not
# because of what they are about.
_PHRASING = frozenset({"user", "assistant", "prefer", "prefers", "like", "likes", "want", "wants", "thing"})
_MIN_TERM_CHARS = 3


class Pattern(BaseModel):
    """Kept in the end user's partition: its key term comes from their private words, so it is theirs (and erased
    with them), shared only by their own memories, never across end users or into the tenant's knowledge."""

    id: str
    key_terms: list[str]
    pattern_type: str = PATTERN_TYPE
    occurrences: int = Field(ge=0)
    # The memories linked to it (its incoming EXEMPLIFIES edges), which `pattern_exemplar_limit` bounds; None for a
    # node stored before the count was kept, until its next write.
    exemplars: int | None = Field(None, ge=0)
    confidence: float = Field(ge=0.0, le=1.0)
    created_at: datetime
    updated_at: datetime


def pattern_id(term: str) -> str:
    return f"{PATTERN_PREFIX}{term}"


def is_pattern_id(node_id: str) -> bool:
    return node_id.startswith(PATTERN_PREFIX)


def key_terms(content: str, limit: int) -> list[str]:
    """The memory's candidate key terms: content words, longest first (a cheap stand-in for rarity, which would
    need corpus statistics), numbers and phrasing words left out."""
    seen = dict.fromkeys(
        t for t in tokenize(content) if len(t) >= _MIN_TERM_CHARS and not t.isdigit() and t not in _PHRASING
    )
    return sorted(seen, key=lambda term: -len(term))[:limit]


def pattern_confidence(occurrences: int, minimum: int, full: int) -> float:
    """0.5 when the term first counts as a pattern, rising linearly to 1.0 at `full` occurrences."""
    if occurrences < minimum:
        return 0.0
    if full <= minimum:
        return 1.0
    return round(min(1.0, 0.5 + 0.5 * (occurrences - minimum) / (full - minimum)), 4)


class PatternRepository:
    def __init__(self, items: ItemStore) -> None:
        self._items = items

    def get(self, scope: Scope, term: str) -> Pattern | None:
        item = self._items.get_item(ItemScope.of_user(scope), PATTERN_KIND, term)
        return Pattern.model_validate(item.body) if item else None

    def get_many(self, scope: Scope, terms: Sequence[str]) -> dict[str, Pattern]:
        """The stored patterns among the terms, from one batched read."""
        found = self._items.get_items(ItemScope.of_user(scope), [(PATTERN_KIND, term) for term in terms])
        return {key: Pattern.model_validate(item.body) for (_, key), item in found.items()}

    @staticmethod
    def write(term: str, pattern: Pattern) -> ItemPut:
        """The item write that stores the pattern, for a caller that writes it together with its edges."""
        return ItemPut(kind=PATTERN_KIND, key=term, body=pattern.model_dump(mode="json"))

    def put(self, scope: Scope, term: str, pattern: Pattern) -> Pattern:
        item_scope = ItemScope.of_user(scope)
        self._items.put_item(item_scope, PATTERN_KIND, term, pattern.model_dump(mode="json"), now=pattern.updated_at)
        return pattern

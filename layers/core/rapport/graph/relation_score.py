"""The relation component of recall: how well connected a memory is, from its edges, as a pure function."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rapport.domain.recall import RelationScore
from rapport.domain.relations import Edge
from rapport.services.edges import Link
from rapport.settings import GraphSettings


@dataclass(frozen=True)
class RelationScoreRule:
    """incoming x 0.5 + outgoing x 0.3 + type diversity x 0.2 (the brief), each part normalised to 0..1."""

    incoming_weight: float = 0.5
    outgoing_weight: float = 0.3
    diversity_weight: float = 0.2
    # Summed strength at which a direction counts as fully connected: five full-strength edges, the per-seed
    # relation limit, so a memory cannot outscore another just by piling up weak links beyond that.
    saturation: float = 5.0
    type_saturation: int = 4  # distinct edge types at which diversity is 1
    ignored: frozenset[str] = frozenset({"PRECEDED_BY", "SIMILAR_TO"})  # enrichment's automatic links

    @classmethod
    def of(cls, settings: GraphSettings) -> RelationScoreRule:
        return cls(
            incoming_weight=settings.relation_incoming_weight,
            outgoing_weight=settings.relation_outgoing_weight,
            diversity_weight=settings.relation_diversity_weight,
            saturation=settings.relation_saturation,
            type_saturation=settings.relation_type_saturation,
            ignored=frozenset(settings.relation_score_ignores),
        )

    def score(self, incoming: Iterable[Edge], outgoing: Iterable[Edge]) -> float:
        """0 with no (counted) edges; at most 1 when the weights sum to 1, as the brief's do."""
        return self.relation(list(incoming), list(outgoing)).score

    def relation(self, incoming: Sequence[Edge], outgoing: Sequence[Edge]) -> RelationScore:
        """The score with the edge types it counted, which a hit names in its reasons."""
        return self.relation_of_links(_links(incoming), _links(outgoing))

    def relation_of_links(self, incoming: Sequence[Link], outgoing: Sequence[Link]) -> RelationScore:
        """`relation` from each edge's type and strength alone, all the rule reads of an edge."""
        counted_in = [(kind, strength) for kind, strength in incoming if kind not in self.ignored]
        counted_out = [(kind, strength) for kind, strength in outgoing if kind not in self.ignored]
        if not counted_in and not counted_out:
            return _UNLINKED
        types = {kind for kind, _ in counted_in} | {kind for kind, _ in counted_out}
        score = (
            self.incoming_weight * min(1.0, sum(strength for _, strength in counted_in) / self.saturation)
            + self.outgoing_weight * min(1.0, sum(strength for _, strength in counted_out) / self.saturation)
            + self.diversity_weight * min(1.0, len(types) / self.type_saturation)
        )
        return RelationScore(score=score, edge_types=tuple(sorted(types)))


_UNLINKED = RelationScore(score=0.0, edge_types=())


def _links(edges: Iterable[Edge]) -> list[Link]:
    return [(edge.type.value, edge.strength) for edge in edges]

"""Recall scores its candidates from their parts and builds signals for those it shows alone: the scores it ranks on
are the scores the signals it shows give, to the last bit, whatever is linked or leaned on after."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from rapport.domain.models import Domain, Memory, Trust
from rapport.domain.recall import (
    RecallScoring,
    RelationScore,
    keyword_evidence_of,
    keyword_evidences,
    query_evidence,
)
from rapport.domain.scoring import ContextBoost, TurnPlace
from rapport.services.recall import _Candidate, _Scored
from rapport.settings import Settings

SCORING = RecallScoring.of(Settings())
# A question gathered across the history is scored with recency and strength weighing nothing.
WHOLE_HISTORY = RecallScoring.of(
    Settings().model_copy(update={"weights": Settings().weights.model_copy(update={"recency": 0.0, "strength": 0.0})})
)
T0 = datetime(2026, 3, 1, tzinfo=UTC)
unit = st.floats(0.0, 1.0)


def candidate(n: int, similarity: float, keyword: float, strength: float, age: float, said_by: Trust) -> _Candidate:
    memory = Memory.model_validate(
        {
            "id": f"m{n:03d}",
            "tenant_id": "t",
            "user_id": "u",
            "domain": Domain.USER,
            "type": "fact",
            "content": f"memory {n}",
            "importance": (n % 10) / 10,
            "trust": said_by,
            "created_at": T0,
            "updated_at": T0,
            "last_reinforced_at": T0,
        }
    )
    return _Candidate(memory, similarity, keyword, ("dog",), strength, TurnPlace(None), age)


parts = st.tuples(
    st.floats(-1.0, 1.0), unit, unit, st.floats(0.0, 400.0), st.sampled_from([Trust.EXTRACTED, Trust.ASSISTANT_SAID])
)


def linked_and_leaned(
    rows: list[tuple[float, float, float, float, Trust]], lifts: list[float], data: st.DataObject
) -> _Scored:
    """Candidates with their conversations' context, scored by either weights, then some linked by the graph and some
    leaned on."""
    candidates = [candidate(n, *row) for n, row in enumerate(rows)]
    contexts = [ContextBoost(answer=lifts[n] / 3, conversation=lifts[-1 - n] / 5) for n in range(len(rows))]
    scored = _Scored.of(data.draw(st.sampled_from([SCORING, WHOLE_HISTORY])), candidates, contexts, query_terms=2)
    for n in data.draw(st.lists(st.integers(0, len(rows) - 1), max_size=4)):
        scored.link(n, RelationScore(lifts[n], ("SUPPORTS",)))
    for n in data.draw(st.lists(st.integers(0, len(rows) - 1), max_size=4)):
        scored.lean(n, ContextBoost(preference=0.05, time=lifts[n] / 7))
    return scored


@given(st.lists(parts, min_size=1, max_size=12), st.lists(unit, min_size=12, max_size=12), st.data())
def test_the_scores_ranked_on_are_the_scores_of_the_signals_shown(
    rows: list[tuple[float, float, float, float, Trust]], lifts: list[float], data: st.DataObject
) -> None:
    # Given candidates with their conversations' context, some then linked by the graph and some leaned on
    scored = linked_and_leaned(rows, lifts, data)
    candidates, scoring = scored.candidates, scored.scoring
    evidences = scored.evidences()
    unweighed = scored.unweighed_scores()
    keyword_parts = keyword_evidences(scoring, [c.keyword for c in candidates], scored.weights)
    placed = {p.memory_id: p for p in scored.placed({c.memory.id: n for n, c in enumerate(candidates)})}
    for n, c in enumerate(candidates):
        signals = scored.signals(n, weighed=False)
        weighed = scoring.weighed(c.memory, signals)
        # Then each score, its evidence and its score as the person's own words are those of the signals
        assert scored.signals(n) == weighed
        assert scored.scores[n] == scoring.score(weighed)
        assert evidences[n] == query_evidence(scoring, weighed)
        assert keyword_parts[n] == keyword_evidence_of(scoring, c.keyword, weighed.speaker_weight)
        assert unweighed[n] == scoring.score(signals)
        assert scoring.hit(c.memory, signals).score == scored.scores[n]
        # And ranking places it at that score and evidence
        assert (placed[c.memory.id].score, placed[c.memory.id].evidence) == (scored.scores[n], evidences[n])

"""Episodes know who spoke: the assistant's own replies weigh less in recall and are rendered apart from what the
person said, each with its speaker."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from rapport.domain.models import Domain, Memory, Provenance, SourceKind, Trust
from rapport.domain.recall import RecallScoring
from rapport.domain.relational_state import StateReading
from rapport.domain.reply_context import ReplyContext, build_system_prompt, render_memory
from rapport.domain.scoring import RecallSignals, hybrid_score, speaker_weight
from rapport.settings import RecallWeights, Settings

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
SIGNALS = RecallSignals(
    similarity=0.6, keyword=0.5, matched_terms=("flight",), query_terms=2, age_days=1, importance=0.5, strength=1
)


def _episode(content: str, speaker: str, trust: Trust | None = None) -> Memory:
    return Memory(
        id=f"e-{speaker}-{len(content)}",
        tenant_id="t",
        user_id="u",
        domain=Domain.USER,
        type="episode",
        content=content,
        source=Provenance(kind=SourceKind.INTERACTION, interaction_id="i1", message_index=0, speaker=speaker),
        trust=trust,
        occurred_at=T0,
        created_at=T0,
        updated_at=T0,
        last_reinforced_at=T0,
    )


def _reading() -> StateReading:
    return StateReading(
        trust=0.5,
        sentiment=0.5,
        grudge=0.0,
        familiarity=0.0,
        relation_bias=0.0,
        tone_modifier=None,
        crisis_open=False,
        at=T0,
    )


def test_the_same_match_scores_lower_in_the_assistants_words() -> None:
    weights = RecallWeights()
    assert speaker_weight(False, weights) == 1.0 and speaker_weight(True, weights) == weights.assistant_words < 1.0
    scoring = RecallScoring.of(Settings())
    theirs = scoring.hit(_episode("My flight is Friday", "user"), SIGNALS)
    ours = scoring.hit(_episode("My flight is Friday", "assistant"), SIGNALS)
    full = hybrid_score(SIGNALS, weights, scoring.half_life_days)
    assert theirs.score == pytest.approx(full, abs=1e-6)
    assert ours.score == pytest.approx(weights.assistant_words * full, abs=1e-6) and ours.score < theirs.score
    assert any("assistant's own reply" in r for r in ours.match_reasons)
    assert not any("assistant's own reply" in r for r in theirs.match_reasons)


def test_an_episode_is_rendered_with_its_speaker() -> None:
    assert render_memory(_episode("I moved to Lisbon", "user")) == "[05 January 2026] they said: I moved to Lisbon"
    assert (
        render_memory(_episode("I moved to Lisbon", "Caroline")) == "[05 January 2026] Caroline said: I moved to Lisbon"
    )
    reply = _episode("Lisbon is lovely in May", "assistant")
    assert reply.trust is Trust.ASSISTANT_SAID
    assert render_memory(reply) == "[05 January 2026] you said: Lisbon is lovely in May"


def test_the_assistants_reply_is_never_listed_as_what_is_remembered_about_them() -> None:
    prompt = build_system_prompt(
        ReplyContext(
            state=_reading(),
            memories=[_episode("You should try the tram to Belem", "assistant"), _episode("I moved to Lisbon", "user")],
        )
    )
    remembered, _, rest = prompt.partition("### What you told them before")
    assert "they said: I moved to Lisbon" in remembered and "tram" not in remembered
    assert "you said: You should try the tram to Belem" in rest


def test_only_replies_leave_the_remembered_section_empty_of_them() -> None:
    prompt = build_system_prompt(ReplyContext(state=_reading(), memories=[_episode("Try the tram", "assistant")]))
    assert "### What you remember about them" not in prompt and "you said: Try the tram" in prompt

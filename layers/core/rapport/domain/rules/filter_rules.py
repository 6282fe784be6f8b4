"""The rule-based constructive filter: corrections pass, reframes keep the lesson, blocks drop the grievance."""

from __future__ import annotations

from rapport.domain.filtering import Verdict
from rapport.domain.prompts.constructive_filter import CandidateVerdict, FilterCandidate, FilterInput, FilterJudgement
from rapport.domain.rules import patterns
from rapport.domain.rules.lessons import lesson_of
from rapport.domain.rules.wording import compiled
from rapport.domain.semantics.matcher import SemanticLayer
from rapport.domain.semantics.verdicts import semantic_verdicts

CORRECTION_REASON = "A factual correction is kept whatever its tone, so the wrong fact is not what is remembered."
ALLOWED_REASON = "Constructive: it can shape a future conversation for the better."
VAGUE_REASON = "Too vague to help a future conversation on its own."
LESSON_REASON = "What went badly is kept as what to avoid next time; the feeling is not kept."


def judge(candidates: FilterInput, semantics: SemanticLayer | None = None) -> FilterJudgement:
    """`semantics`: the meaning of what the patterns do not recognise (one embedding call for all candidates)."""
    by_meaning = (
        semantic_verdicts(semantics, [c.content for c in candidates.candidates])
        if semantics is not None
        else [None] * len(candidates.candidates)
    )
    return FilterJudgement(
        verdicts=[judge_one(c, meaning) for c, meaning in zip(candidates.candidates, by_meaning, strict=True)]
    )


def judge_one(candidate: FilterCandidate, meaning: tuple[Verdict, str, str | None] | None = None) -> CandidateVerdict:
    """Patterns first where they are precise; then the candidate's meaning; then the default."""
    text = candidate.content
    if candidate.correction or any(compiled(p).search(text) for p in patterns.FILTER_CORRECTIONS):
        return CandidateVerdict(index=candidate.index, verdict=Verdict.ALLOWED, reason=CORRECTION_REASON)
    for rule in patterns.FILTER_REFRAMES:
        if compiled(rule.pattern).search(text):
            return CandidateVerdict(
                index=candidate.index, verdict=Verdict.REFRAMED, reason=rule.reason, reframed_content=rule.replacement
            )
    lesson = lesson_of(text)
    if lesson is not None:
        return CandidateVerdict(
            index=candidate.index, verdict=Verdict.REFRAMED, reason=LESSON_REASON, reframed_content=lesson
        )
    for rule in patterns.FILTER_BLOCKS:
        if compiled(rule.pattern).search(text):
            return CandidateVerdict(index=candidate.index, verdict=Verdict.BLOCKED, reason=rule.reason)
    if meaning is not None:
        verdict, reason, reframed = meaning
        return CandidateVerdict(index=candidate.index, verdict=verdict, reason=reason, reframed_content=reframed)
    if len(text.split()) < patterns.FILTER_MIN_WORDS:
        return CandidateVerdict(index=candidate.index, verdict=Verdict.BLOCKED, reason=VAGUE_REASON)
    return CandidateVerdict(index=candidate.index, verdict=Verdict.ALLOWED, reason=ALLOWED_REASON)

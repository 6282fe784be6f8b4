"""The rule-based constructive filter: corrections pass, reframes keep the lesson, blocks drop the grievance."""

from __future__ import annotations

from rapport.domain.filtering import Verdict
from rapport.domain.prompts.constructive_filter import CandidateVerdict, FilterCandidate, FilterInput, FilterJudgement
from rapport.domain.rules import patterns
from rapport.domain.rules.wording import compiled

CORRECTION_REASON = "A factual correction is kept whatever its tone, so the wrong fact is not what is remembered."
ALLOWED_REASON = "Constructive: it can shape a future conversation for the better."
VAGUE_REASON = "Too vague to help a future conversation on its own."


def judge(candidates: FilterInput) -> FilterJudgement:
    return FilterJudgement(verdicts=[judge_one(candidate) for candidate in candidates.candidates])


def judge_one(candidate: FilterCandidate) -> CandidateVerdict:
    text = candidate.content
    if candidate.correction or any(compiled(p).search(text) for p in patterns.FILTER_CORRECTIONS):
        return CandidateVerdict(index=candidate.index, verdict=Verdict.ALLOWED, reason=CORRECTION_REASON)
    for rule in patterns.FILTER_REFRAMES:
        if compiled(rule.pattern).search(text):
            return CandidateVerdict(
                index=candidate.index, verdict=Verdict.REFRAMED, reason=rule.reason, reframed_content=rule.replacement
            )
    for rule in patterns.FILTER_BLOCKS:
        if compiled(rule.pattern).search(text):
            return CandidateVerdict(index=candidate.index, verdict=Verdict.BLOCKED, reason=rule.reason)
    if len(text.split()) < patterns.FILTER_MIN_WORDS:
        return CandidateVerdict(index=candidate.index, verdict=Verdict.BLOCKED, reason=VAGUE_REASON)
    return CandidateVerdict(index=candidate.index, verdict=Verdict.ALLOWED, reason=ALLOWED_REASON)

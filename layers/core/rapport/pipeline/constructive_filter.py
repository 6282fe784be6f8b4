"""Step 3, the constructive filter: would remembering this help future interactions? Allow, block or reframe."""

from __future__ import annotations

from rapport.domain.filtering import Verdict
from rapport.domain.prompts import constructive_filter as prompt
from rapport.domain.prompts import payload
from rapport.domain.quarantine import DETECTOR, instructions_in
from rapport.errors import InvalidModelOutputError
from rapport.ids import derived_id
from rapport.pipeline.asking import Answer, ask
from rapport.ports.language_model import LanguageModel
from rapport.ports.pipeline import Candidate, ExtractionResult, FilterOutcome, Judged, PipelineState

CORRECTION_OVERRIDE = "A factual correction is never dropped as negative (the model's block was overruled)."


class ConstructiveFilter:
    """`fallback` stands in when `model` twice answers with output that does not validate; None when `model` is
    the rules."""

    def __init__(self, model: LanguageModel, fallback: LanguageModel | None) -> None:
        self.model = model
        self.fallback = fallback

    def __call__(self, state: PipelineState) -> FilterOutcome:
        if state.already_done:
            return FilterOutcome(skipped=True)
        sources: list[tuple[Candidate, ExtractionResult]] = [
            (candidate, result) for result in state.extracted or [] for candidate in result.candidates
        ]
        if not sources:
            return FilterOutcome()
        # Defence in depth: whatever model judges the rest, what reads as instructions to the assistant is
        # quarantined by the rules, and never shown to that model to be reworded into a lesson.
        findings = [instructions_in(candidate.content) for candidate, _ in sources]
        asked = [i for i, finding in enumerate(findings) if finding is None]
        answer = self._verdicts([sources[i][0] for i in asked]) if asked else None
        verdicts = {asked[v.index]: v for v in answer.value.verdicts} if answer is not None else {}
        judged: list[Judged] = []
        for i, (candidate, result) in enumerate(sources):
            decision_id = derived_id(
                state.interaction_id, f"filter|{candidate.domain.value}|{candidate.content.lower()}"
            )
            finding = findings[i]
            if finding is not None:
                judged.append(
                    Judged(
                        decision_id=decision_id,
                        candidate=candidate,
                        verdict=Verdict.QUARANTINED,
                        reason=finding.describe()[:500],
                        content=candidate.content,
                        decided_by=DETECTOR,
                        extractor=result.extractor,
                        extractor_fallback_reason=result.fallback_reason,
                    )
                )
                continue
            assert answer is not None  # every candidate without a finding was asked
            v = verdicts[i]
            verdict, reason = v.verdict, v.reason.strip() or "no reason given"
            if candidate.correction and verdict is Verdict.BLOCKED:
                # Whatever the model says, the corrected fact must win over the wrong one it replaces.
                verdict, reason = Verdict.ALLOWED, CORRECTION_OVERRIDE
            content = {
                Verdict.ALLOWED: candidate.content,
                Verdict.REFRAMED: " ".join((v.reframed_content or "").split()),
                Verdict.BLOCKED: None,
                Verdict.QUARANTINED: candidate.content,  # the model may see instructions the rules missed
            }[verdict]
            judged.append(
                Judged(
                    decision_id=decision_id,
                    candidate=candidate,
                    verdict=verdict,
                    reason=reason[:500],
                    content=content,
                    decided_by=answer.model,
                    fallback_reason=answer.fallback_reason,
                    extractor=result.extractor,
                    extractor_fallback_reason=result.fallback_reason,
                )
            )
        return FilterOutcome(judged=judged)

    def _verdicts(self, candidates: list[Candidate]) -> Answer[prompt.FilterJudgement]:
        request = prompt.FilterInput(
            candidates=[
                prompt.FilterCandidate(
                    index=i, domain=c.domain, type=c.type, content=c.content, correction=c.correction
                )
                for i, c in enumerate(candidates)
            ]
        )

        def one_verdict_each(judgement: prompt.FilterJudgement) -> None:
            indexes = sorted(v.index for v in judgement.verdicts)
            if indexes != list(range(len(candidates))):
                raise InvalidModelOutputError(
                    f"expected one verdict for each of {len(candidates)} candidates, got {indexes}"
                )
            for v in judgement.verdicts:
                if v.verdict is Verdict.REFRAMED and not (v.reframed_content or "").strip():
                    raise InvalidModelOutputError(f"candidate {v.index} was reframed without the reframed memory")

        return ask(
            self.model,
            self.fallback,
            system=prompt.SYSTEM,
            user=payload.render(prompt.TASK, request),
            response_model=prompt.FilterJudgement,
            check=one_verdict_each,
        )

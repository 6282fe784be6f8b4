"""Step 3, the constructive filter: would remembering this help future interactions? Allow, block or reframe."""

from __future__ import annotations

from rapport.domain.filtering import Verdict
from rapport.domain.prompts import constructive_filter as prompt
from rapport.domain.prompts import payload
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
        answer = self._verdicts([candidate for candidate, _ in sources])
        verdicts = {v.index: v for v in answer.value.verdicts}
        judged: list[Judged] = []
        for i, (candidate, result) in enumerate(sources):
            v = verdicts[i]
            verdict, reason = v.verdict, v.reason.strip() or "no reason given"
            if candidate.correction and verdict is Verdict.BLOCKED:
                # Whatever the model says, the corrected fact must win over the wrong one it replaces.
                verdict, reason = Verdict.ALLOWED, CORRECTION_OVERRIDE
            content = {
                Verdict.ALLOWED: candidate.content,
                Verdict.REFRAMED: " ".join((v.reframed_content or "").split()),
                Verdict.BLOCKED: None,
            }[verdict]
            judged.append(
                Judged(
                    decision_id=derived_id(
                        state.interaction_id, f"filter|{candidate.domain.value}|{candidate.content.lower()}"
                    ),
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

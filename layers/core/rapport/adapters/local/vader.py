"""The local signal detector: the VADER sentiment lexicon for polarity, the rule tables for everything else."""

from __future__ import annotations

from typing import Any

from rapport.domain.semantics.emotions import probed_emotion
from rapport.domain.semantics.matcher import SemanticLayer
from rapport.domain.signals import Emotion, Intent, Signals, read_message


class VaderSentimentScorer:
    """VADER's compound score. The lexicon (a few hundred KB, read from the package) loads on first use, not at
    import, so a process that never scores text never pays for it."""

    def __init__(self, analyzer: Any | None = None) -> None:
        self._analyzer = analyzer

    def polarity(self, text: str) -> float:
        if not text.strip():
            return 0.0
        if self._analyzer is None:
            from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

            self._analyzer = SentimentIntensityAnalyzer()
        return float(self._analyzer.polarity_scores(text)["compound"])


class RuleSignalDetector:
    """`semantics`: the semantic layer, whose emotion probe reads a message the rules find no emotion in
    (docs/pipeline.md, "An emotion probe"); None reads by the rules alone."""

    def __init__(self, scorer: VaderSentimentScorer | None = None, semantics: SemanticLayer | None = None) -> None:
        self._scorer = scorer or VaderSentimentScorer()
        self._semantics = semantics

    @property
    def name(self) -> str:
        return "vader+rules"

    def detect(self, text: str) -> Signals:
        polarity = self._scorer.polarity(text)
        reading = read_message(text, polarity, detector=self.name)
        # The probe is asked where the rules found nothing, or frustration alone (which may be a worry).
        if (
            set(reading.emotions) - {Emotion.FRUSTRATION}
            or reading.crisis
            or self._semantics is None
            or not text.strip()
        ):
            return reading
        felt = probed_emotion(self._semantics, text)
        # A request the rules find no feeling in is not taken for a frustration on the probe's word alone: asking
        # for something is how most messages to me read, and the probe, which learnt frustration mostly from
        # demands made of me, reads "can you check my maths homework?" as one (docs/pipeline.md, "An emotion
        # probe").
        if felt is None or (felt is Emotion.FRUSTRATION and reading.intent is Intent.REQUEST and not reading.emotions):
            return reading
        return read_message(text, polarity, detector=self.name, felt=felt)

"""The local signal detector: the VADER sentiment lexicon for polarity, the rule tables for everything else."""

from __future__ import annotations

from typing import Any

from rapport.domain.signals import Signals, read_message


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
    def __init__(self, scorer: VaderSentimentScorer | None = None) -> None:
        self._scorer = scorer or VaderSentimentScorer()

    @property
    def name(self) -> str:
        return "vader+rules"

    def detect(self, text: str) -> Signals:
        return read_message(text, self._scorer.polarity(text), detector=self.name)

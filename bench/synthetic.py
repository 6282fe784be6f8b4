"""Synthetic memories and queries with a Zipf-like vocabulary, so keyword postings look like real text's."""

from __future__ import annotations

import random

_COMMON = (
    "went visited made bought started finished loved enjoyed planned tried learned painted cooked read watched played "
    "met called helped moved adopted joined shared wrote ran hiked camped sang built fixed found lost won"
).split()
_NOUNS = (
    "dog cat garden recipe concert book project meeting trip beach mountain museum class course bike car house "
    "office team game tournament painting pottery guitar piano song movie series family kids friend mother father "
    "sister brother boss client store shop market festival park lake river forest city village school university "
    "job interview promotion deadline budget report launch release bug feature proxy server database cache"
).split()
_MODIFIERS = (
    "new old favourite local big small quiet busy sunny rainy early late weekly monthly first second last next"
).split()
_NAMES = "Alex Sam Jordan Casey Riley Morgan Taylor Jamie Robin Avery".split()


class SyntheticText:
    """Deterministic per seed; each text mixes common and rare words, as a chat message does."""

    def __init__(self, seed: int = 7, rare_words: int = 20_000) -> None:
        self._random = random.Random(seed)
        self._rare = [f"w{n}" for n in range(rare_words)]

    def _rare_word(self) -> str:
        # Zipf-like: low ranks are far more frequent than high ones.
        rank = int(self._random.paretovariate(1.1)) % len(self._rare)
        return self._rare[rank]

    def sentence(self) -> str:
        r = self._random
        words = [
            r.choice(_NAMES),
            r.choice(_COMMON),
            "the",
            r.choice(_MODIFIERS),
            r.choice(_NOUNS),
            "with",
            self._rare_word(),
            "and",
            self._rare_word(),
            r.choice(_NOUNS),
        ]
        return " ".join(words[: r.randint(6, len(words))])

    def query(self) -> str:
        r = self._random
        return f"what {r.choice(_COMMON)} {r.choice(_NAMES)} with the {r.choice(_NOUNS)} {self._rare_word()}?"

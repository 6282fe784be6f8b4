"""The paraphrase-set harness (bench/paraphrase_hits.py) fills a real local store and scores recall beside cosine."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import paraphrase
from bench.paraphrase_hits import hits_at
from rapport.adapters.local.hashing_embedder import HashingEmbedder

pytestmark = pytest.mark.integration


def test_every_set_is_distinct_and_the_fresh_one_shares_no_fact_with_the_others() -> None:
    for pairs in paraphrase.SETS.values():
        assert len({fact for fact, _ in pairs}) == len(pairs) == len({q for _, q in pairs})
    for name in ("fresh", "fresh2"):
        older = {fact for other, pairs in paraphrase.SETS.items() if other != name for fact, _ in pairs}
        assert not older & {fact for fact, _ in paraphrase.SETS[name]}


def test_a_question_that_repeats_its_fact_is_found_and_the_misses_name_the_questions_not_found(
    tmp_path: Path,
) -> None:
    # Given two facts among 300 memories: one asked in its own words, one in words it does not hold
    pairs = (
        ("The lighthouse keeper painted the railings blue", "The lighthouse keeper painted the railings blue"),
        ("My aunt grows orchids in a glasshouse", "zebra quantum saxophone"),
    )
    rapport, cosine, missed = hits_at(300, pairs, HashingEmbedder(64), tmp_path)
    # Then the first is Rapport's and cosine's first hit, and the counts cover both questions
    assert rapport.questions == cosine.questions == 2
    assert rapport.at1 >= 1 and cosine.at1 >= 1
    assert 0 not in missed
    assert (1 in missed) == (rapport.at10 == 1)

"""Text rules shared by keyword search and match explanations: tokenizing, stopwords, stemming."""

from __future__ import annotations

import functools
import re

from rapport.domain.stemming import porter_stem

_TOKEN = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")

STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before being below between
    both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each few for from
    further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his
    how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't my myself no nor
    not of off on once only or other ought our ours ourselves out over own same shan't she she'd she'll she's should
    shouldn't so some such than that that's the their theirs them themselves then there there's these they they'd
    they'll they're they've this those through to too under until up very was wasn't we we'd we'll we're we've were
    weren't what what's when when's where where's which while who who's whom why why's with won't would wouldn't you
    you'd you'll you're you've your yours yourself yourselves did does also just
    """.split()
)


def _normalise(token: str) -> str:
    """One apostrophe, no possessive: "Caroline’s" and "caroline's" are the same word as "caroline"."""
    token = token.replace("’", "'")
    return token[:-2] if token.endswith("'s") else token


def _stem(token: str) -> str:
    """Porter stems (the algorithm OpenSearch's `english` analyzer runs), so 'camped', 'camping' and 'camps' meet;
    contractions stay whole."""
    return token if "'" in token else porter_stem(token)


def words(text: str, *, keep_stopwords: bool = False) -> list[str]:
    """Lower-case words as written (possessives dropped), stopwords dropped unless asked for: what a person reads."""
    tokens = [t.replace("’", "'") for t in _TOKEN.findall(text.lower())]
    if keep_stopwords:
        return [_normalise(t) for t in tokens]
    # Checked before and after the possessive goes: "let's" is a stopword, and so is the "it" of "it's".
    kept = (_normalise(t) for t in tokens if t not in STOPWORDS)
    return [t for t in kept if t and t not in STOPWORDS]


def tokenize(text: str, *, keep_stopwords: bool = False) -> list[str]:
    """Lower-case word tokens, stemmed; stopwords dropped unless asked for."""
    return [_stem(t) for t in words(text, keep_stopwords=keep_stopwords)]


@functools.lru_cache(maxsize=32_768)
def term_set(text: str) -> frozenset[str]:
    """The text's stems as a set. Recall asks it of every candidate of every query, and the same memories come back
    query after query: kept, it costs a lookup instead of a tokenisation."""
    return frozenset(tokenize(text))

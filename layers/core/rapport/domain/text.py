"""Text rules shared by keyword search and match explanations: tokenizing, stopwords, light stemming."""

from __future__ import annotations

import re

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


def _stem(token: str) -> str:
    """A deliberately light stemmer: plural and possessive endings only, so 'dogs' meets 'dog' and 'class' stays."""
    if token.endswith(("'s", "’s")):
        token = token[:-2]
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


def tokenize(text: str, *, keep_stopwords: bool = False) -> list[str]:
    """Lower-case word tokens, stemmed lightly; stopwords dropped unless asked for."""
    tokens = _TOKEN.findall(text.lower())
    if not keep_stopwords:
        tokens = [t for t in tokens if t not in STOPWORDS]
    return [_stem(t) for t in tokens]

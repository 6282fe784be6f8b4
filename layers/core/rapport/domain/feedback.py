"""Questions asked across a person's history, and the second recall pass they call for: pure rules (docs/recall.md,
"A second pass for multi-hop questions" and "Open-domain questions")."""

from __future__ import annotations

import heapq
import math
import re
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

Item = TypeVar("Item", bound=Hashable)

# A question gathers several facts when it asks for a set ("what activities…", "which cities…"), a count ("how many
# times…"), what two people share ("what do X and Y both…", "in common") or what someone has done over time ("what
# has X painted?": the present perfect spans every session). Read as written, case aside: these are properties of
# English questions, not of any conversation.
_ACROSS = re.compile(
    r"\b(?:"
    r"both|in common|how many|how often|\w+ times\b|ever|so far"
    r"|what (?:are|were) (?:some|the|all)"
    r"|which \w+s\b"
    r"|what (?:\w+ )?\w+s (?:has|have|did|does|do|is|are)\b"
    r"|(?:has|have) \w+(?: \w+)? (?:\w+ed|done|been|made|read|seen|taken|gone|met|bought|written|given|held|run|won"
    r"|played|visited|attended|participated|taught|drawn|built|sung|lost|found|kept|eaten|chosen)\b"
    r")",
    re.IGNORECASE,
)

# An inference question asks what would follow from the person's preferences and traits rather than what was said:
# "would X enjoy…", "what might X…", "is X likely to…", "would X be considered…".
_INFERENCE = re.compile(
    r"\b(?:would|might|likely|unlikely|probably|could \w+ be|considered|be open to|interested in)\b", re.IGNORECASE
)

# A name or title in a message that the question does not contain: what links a first hit to the facts around it
# ("Caroline recommended *Becoming Nicole*" → the message about finishing it). A capitalised word not opening a
# sentence, or a quoted phrase.
_NAMED = re.compile(r"\"([^\"]{2,60})\"|“([^”]{2,60})”|(?<![.!?:]\s)(?<!^)\b([A-Z][\w'-]+(?:\s+[A-Z][\w'-]+){0,3})")


def asks_across(query: str) -> bool:
    """Whether the question gathers facts across the history: a set, a count, what two people share, what someone
    has done over time. Such a question is answered by several memories, often from different sittings."""
    return _ACROSS.search(query) is not None


def asks_inference(query: str) -> bool:
    """Whether the question asks for an inference from the person's preferences and traits ("would she enjoy…",
    "what might he…"), not for something said."""
    return _INFERENCE.search(query) is not None


def feedback_vector(query: Sequence[float], seeds: Sequence[Sequence[float]], weight: float) -> list[float]:
    """Rocchio's relevance feedback: the query moved `weight` of the way towards the mean of the seeds' vectors, at
    unit length. No seed (or weight 0) leaves the query as it is."""
    widths = [s for s in seeds if len(s) == len(query)]
    if not widths or weight <= 0:
        return list(query)
    mean = [sum(column) / len(widths) for column in zip(*widths, strict=True)]
    moved = [(1.0 - weight) * q + weight * m for q, m in zip(query, mean, strict=True)]
    norm = math.sqrt(sum(x * x for x in moved))
    return [x / norm for x in moved] if norm > 0 else list(query)


def bridging_terms(query: str, seed_texts: Iterable[str], known_names: Iterable[str], limit: int) -> tuple[str, ...]:
    """Names and titles in the first hits that the question does not say, most frequent first (then first seen): the
    entities that carry a connection from the first hits to facts the question's own words do not reach. Names in
    `known_names` (the speakers) are left out: they are in every message of theirs and link nothing."""
    if limit <= 0:
        return ()
    asked = {w.lower() for w in re.findall(r"[\w'-]+", query)}
    ignored = {n.lower() for name in known_names for n in name.split()}
    counts: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    for text in seed_texts:
        for match in _NAMED.finditer(text):
            phrase = " ".join((match.group(1) or match.group(2) or match.group(3)).split())
            key = phrase.lower()
            parts = key.split()
            if not parts or all(p in asked or p in ignored for p in parts):
                continue
            counts[key] += 1
            first_seen.setdefault(key, len(first_seen))
    ranked = sorted(counts, key=lambda k: (-counts[k], first_seen[k]))
    return tuple(ranked[:limit])


def fused_order(first: Sequence[str], second: Sequence[str], *, keep: int, second_weight: float) -> list[str]:
    """Two rankings merged by each memory's best place, the first's first `keep` kept where they are: a memory's
    place is its rank in the first ranking or its rank in the second divided by `second_weight`, whichever comes
    sooner (at weight 0.5 the second ranking's 2nd place counts as the first's 4th). A memory only the second pass
    reached thus gets a place by what it was found for, which a sum of reciprocal ranks would deny it against
    memories both rankings hold. Ties by the first ranking, then by id, so the order never depends on the order
    things were read in."""
    head = list(dict.fromkeys(first[:keep]))
    first_rank = {memory_id: float(n) for n, memory_id in reversed(list(enumerate(first)))}
    place = dict(first_rank)
    if second_weight > 0:
        for n, memory_id in enumerate(second):
            place[memory_id] = min(place.get(memory_id, math.inf), n / second_weight)
    late = float(len(first) + len(second))
    rest = [i for i in place if i not in head]
    rest.sort(key=lambda i: (place[i], first_rank.get(i, late), i))
    return head + rest


def spread_by_sitting(
    ranked: Sequence[tuple[Item, float]], sitting_of: Callable[[Item], str], penalty: float, depth: int
) -> list[tuple[Item, float]]:
    """`ranked` (item, score; best first) taken greedily, each at its score less `penalty` for every item of its
    sitting already taken, with the score it was taken at: a question gathering facts across the history is answered
    from several sittings, while the sitting boost lifts a whole sitting together. Past the first `depth` taken, the
    rest follow at their scores less the same penalty, in that order. The scores never rise down the list (each step
    takes the best left, and what is left only loses), so it stays best first; equal scores keep `ranked`'s order."""
    if penalty <= 0:
        return list(ranked)
    sittings = [sitting_of(item) for item, _ in ranked]
    # A penalty lowers a whole sitting at once, so within a sitting the best left is its first left: each step
    # compares the sittings' first items only (a heap of them, best score first, then the earliest in `ranked`),
    # not every item left, which is what a question with a hundred candidates and twenty to take would cost.
    queues: dict[str, list[int]] = {}
    for n, sitting in enumerate(sittings):
        queues.setdefault(sitting, []).append(n)
    nexts = dict.fromkeys(queues, 0)
    taken: Counter[str] = Counter()
    heads = [(-ranked[queue[0]][1], queue[0]) for queue in queues.values()]
    heapq.heapify(heads)
    chosen: list[tuple[Item, float]] = []
    picked: set[int] = set()
    while heads and len(chosen) < depth:
        negative, n = heapq.heappop(heads)
        sitting = sittings[n]
        chosen.append((ranked[n][0], -negative))
        picked.add(n)
        taken[sitting] += 1
        nexts[sitting] += 1
        queue = queues[sitting]
        if nexts[sitting] < len(queue):
            following = queue[nexts[sitting]]
            heapq.heappush(heads, (-(ranked[following][1] - penalty * taken[sitting]), following))
    rest = [(item, score - penalty * taken[sittings[n]]) for n, (item, score) in enumerate(ranked) if n not in picked]
    rest.sort(key=lambda pair: -pair[1])  # stable: equal scores keep their order
    return chosen + rest

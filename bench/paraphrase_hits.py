"""Paraphrase hit@1/5/10 of one set (bench/paraphrase.py `SETS`) at given sizes, recall with the query vector given,
beside exact cosine over the same vectors: `python -m bench.paraphrase_hits --set fresh --sizes 1000,10000`.

The quality half of `make bench-scale` without Mem0 and without the timed adds, for a set the scale run does not
load (it loads `PAIRS` alone): the store is filled in bulk as the scale run fills it past its timed sample, with
graph enrichment drained before the questions, so recall reads the person's whole graph. About half a minute at
10,000 memories, twenty at 100,000.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np

from bench import paraphrase
from bench.measure import TENANT, local_services
from bench.scale import (
    LIMIT,
    USER,
    PrecomputedEmbedder,
    add_vectors_option,
    cosine_hits,
    kept_vectors,
    load_in_bulk,
    texts_for,
)
from rapport.domain.recall import RecallQuery
from rapport.domain.scope import Scope
from rapport.ports.embedder import Embedder


def hits_at(
    size: int, pairs: Sequence[tuple[str, str]], embedder: Embedder, work: Path
) -> tuple[paraphrase.Hits, paraphrase.Hits, list[int]]:
    """Rapport's and cosine's hits for `pairs` among `size` memories, and the questions Rapport missed."""
    texts = texts_for(size, pairs=pairs)
    positions = [texts.index(fact) for fact, _ in pairs]
    vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
    questions = np.asarray(embedder.embed([q for _, q in pairs]), dtype=np.float32)
    cosine = cosine_hits(vectors, questions, positions)
    scope = Scope(TENANT, USER)
    known = PrecomputedEmbedder(embedder)
    with local_services(work, known) as services:
        ids = load_in_bulk(services, known, texts, vectors)
        if not services.graph.flush(timeout=3600):
            raise RuntimeError(f"enrichment of {size:,} memories did not finish within an hour")
        ranks = []
        for (_, question), vector, position in zip(pairs, questions, positions, strict=True):
            hits = services.recall.recall(scope, RecallQuery(query=question, limit=LIMIT), vector=vector.tolist())
            ranks.append(paraphrase.rank_of(ids[position], [h.memory.id for h in hits]))
    return paraphrase.Hits.of(ranks), cosine, [n for n, rank in enumerate(ranks) if rank is None]


def main() -> None:
    from rapport.adapters.local.minilm import MiniLmEmbedder

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=sorted(paraphrase.SETS), default="fresh")
    parser.add_argument("--sizes", default="1000,10000")
    add_vectors_option(parser)
    args = parser.parse_args()
    minilm = MiniLmEmbedder()
    embedder: Embedder = kept_vectors(minilm, args.vectors) or minilm
    pairs = paraphrase.SETS[args.set]
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix="rapport-paraphrase-") as work:
            rapport, cosine, missed = hits_at(size, pairs, embedder, Path(work))
        row = {"set": args.set, "size": size, "rapport": asdict(rapport), "cosine": asdict(cosine), "missed": missed}
        print(json.dumps(row), flush=True)
    print("hit@1 / 5 / 10 out of", len(pairs), file=sys.stderr)


if __name__ == "__main__":
    main()

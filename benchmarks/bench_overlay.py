"""The cost of a poisoned query: overlay vs full re-index, and how far their results agree.

A poisoning probe adds a few documents to the corpus for one query. The retrievers take them
as an *overlay* (``SearchRequest.extra``): the 5 poison chunks are scored under the main
index's frozen statistics (BM25: N, avgdl, idf; dense: the fitted embedder, here hashed
TF-IDF with the corpus's idf) and merged into the top k. The baseline is what the overlay
replaces: a fresh retriever indexing corpus + poison ("full re-index"), then the same query.

Corpus and queries: ``bench_retrieval.make_corpus`` / ``make_queries`` (Zipf, made-up words;
common, rare and mixed queries). Poison, PoisonedRAG-style (Zou et al. 2024): for each query,
one document of 5 chunks, each the query's words followed by 10–25 corpus words.

Figures:

* latency of an overlaid query (median over the queries) vs full re-index + query (median
  over the agreement queries, each with its own poison), for BM25 and dense;
* the overlay's overhead vs the same query with no overlay;
* agreement between overlay and re-index over ``--agree-queries`` queries (default 50, one
  re-index each): mean top-10 overlap |A ∩ B| / max(|A|, |B|), top-1 agreement, identical
  top-10 lists, the best poison's rank being equal, and the rate of poison at rank 1 in each.
  Overlay and re-index differ only because the re-index counts the poison in df, N and
  avgdl (BM25) or in the TF-IDF idf (dense).

Run: ``PYTHONPATH=src .venv/bin/python -m benchmarks.bench_overlay [--sizes 10000,100000]
[--agree-queries 50] [--agree-queries-large 50]``. One re-index takes ~0.5 s at 10k and ~5 s
(BM25) / ~4.5 s (dense) at 100k on 2 shared cores, so the defaults run ~10 minutes;
``run_all`` uses fewer re-indexes at 100k.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from benchmarks._common import report
from benchmarks.bench_retrieval import (
    SEED,
    ProjectedHashingEmbedder,
    SyntheticCorpus,
    _size_label,
    make_corpus,
    make_queries,
    paired_medians,
    parse_sizes,
)
from probeguard.core.documents import Chunk, Document
from probeguard.pipeline.retrievers.base import Hit, Retriever, SearchRequest

K = 10
N_POISON = 5
POISON_WORDS = (10, 25)


def make_poison(
    corpus: SyntheticCorpus, queries: Sequence[str], seed: int = SEED
) -> list[list[Chunk]]:
    """For each query, ``N_POISON`` chunks of one document ``poison-<i>``: the query's words
    followed by 10–25 Zipf-distributed corpus words."""
    rng = np.random.default_rng([seed, 3, len(corpus.chunks)])
    p = corpus.counts / corpus.counts.sum()
    out: list[list[Chunk]] = []
    for i, query in enumerate(queries):
        parts = []
        for _ in range(N_POISON):
            n = int(rng.integers(POISON_WORDS[0], POISON_WORDS[1] + 1))
            filler = rng.choice(len(corpus.words), size=n, p=p)
            parts.append(query + " " + " ".join(corpus.words[j] for j in filler))
        doc = Document.create(" ".join(parts), id=f"poison-{i:03d}", source="bench_overlay")
        chunks, start = [], 0
        for j, part in enumerate(parts):
            chunks.append(Chunk.of(doc, start, start + len(part), j))
            start += len(part) + 1
        out.append(chunks)
    return out


@dataclass
class Agreement:
    """Overlay (A) vs re-index (B) top-k lists, accumulated over queries."""

    overlap: list[float]
    top1: list[bool]
    identical: list[bool]
    poison_rank_equal: list[bool]
    poison_top1_a: list[bool]
    poison_top1_b: list[bool]

    @classmethod
    def empty(cls) -> Agreement:
        return cls([], [], [], [], [], [])

    def add(self, a: list[Hit], b: list[Hit]) -> None:
        ids_a = [h.chunk.id for h in a]
        ids_b = [h.chunk.id for h in b]
        if not ids_a and not ids_b:
            return
        self.overlap.append(len(set(ids_a) & set(ids_b)) / max(len(ids_a), len(ids_b)))
        self.top1.append(ids_a[:1] == ids_b[:1])
        self.identical.append(ids_a == ids_b)
        rank_a, rank_b = _poison_rank(a), _poison_rank(b)
        self.poison_rank_equal.append(rank_a == rank_b)
        self.poison_top1_a.append(rank_a == 1)
        self.poison_top1_b.append(rank_b == 1)

    def line(self, name: str) -> str:
        def pct(xs: Sequence[float]) -> str:
            return f"{100 * statistics.fmean(xs):.1f}%" if xs else "n/a"

        return (
            f"{name}: {len(self.overlap)} queries | top-{K} overlap {pct(self.overlap)} | "
            f"top-1 same {pct(self.top1)} | identical top-{K} {pct(self.identical)} | "
            f"best poison rank same {pct(self.poison_rank_equal)} | poison at rank 1: "
            f"overlay {pct(self.poison_top1_a)}, re-index {pct(self.poison_top1_b)}"
        )


def _poison_rank(hits: list[Hit]) -> int | None:
    return next((h.rank for h in hits if h.chunk.doc_id.startswith("poison-")), None)


def bench_one(
    kind: str,
    make: Callable[[], Retriever],
    corpus: SyntheticCorpus,
    queries: Sequence[str],
    poison: Sequence[Sequence[Chunk]],
    n_agree: int,
) -> None:
    label = _size_label(len(corpus.chunks))
    retriever = make()
    retriever.index(corpus.chunks)
    pairs = list(zip(queries, poison))

    def overlay(item: tuple[str, Sequence[Chunk]]) -> list[Hit]:
        return retriever.search(SearchRequest(item[0], K, extra=tuple(item[1])))

    def plain(item: tuple[str, Sequence[Chunk]]) -> list[Hit]:
        return retriever.search(SearchRequest(item[0], K))

    overlay_s, plain_s = paired_medians([overlay, plain], pairs)

    agreement = Agreement.empty()
    reindex_times = []
    for item in pairs[:n_agree]:
        start = time.perf_counter()
        fresh = make()
        fresh.index(list(corpus.chunks) + list(item[1]))
        b = fresh.search(SearchRequest(item[0], K))
        reindex_times.append(time.perf_counter() - start)
        del fresh
        agreement.add(overlay(item), b)
    reindex_s = statistics.median(reindex_times)

    report(
        f"{kind} poisoned query {label} chunks + {N_POISON} poison, top {K}, overlay "
        f"(ours, median of {len(pairs)})",
        overlay_s * 1e3,
        "ms",
        f"full re-index + query (median of {len(reindex_times)})",
        reindex_s * 1e3,
        higher_is_better=False,
    )
    report(
        f"{kind} poisoned query {label} chunks, overlay (ours)",
        overlay_s * 1e3,
        "ms",
        "same query without overlay",
        plain_s * 1e3,
        higher_is_better=False,
    )
    print(agreement.line(f"{kind} {label} overlay vs re-index agreement"), flush=True)


def run(
    sizes: Sequence[int] = (10_000, 100_000),
    n_queries: int = 200,
    agree_queries: int = 50,
    agree_queries_large: int = 50,
) -> None:
    from probeguard.pipeline.retrievers.bm25 import BM25Retriever
    from probeguard.pipeline.retrievers.dense import DenseRetriever

    for n in sizes:
        corpus = make_corpus(n)
        queries = make_queries(corpus, n_queries)
        poison = make_poison(corpus, queries)
        n_agree = agree_queries if n <= 10_000 else agree_queries_large
        print(
            f"-- corpus {_size_label(n)}: {len(corpus.chunks):,} chunks; {len(queries)} "
            f"queries x {N_POISON} poison chunks; {n_agree} re-indexes per retriever",
            flush=True,
        )
        bench_one("BM25", BM25Retriever, corpus, queries, poison, n_agree)
        bench_one(
            "dense",
            lambda: DenseRetriever(ProjectedHashingEmbedder()),
            corpus,
            queries,
            poison,
            n_agree,
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes",
        type=parse_sizes,
        default=[10_000, 100_000],
        help="comma-separated corpus sizes in chunks (default 10000,100000)",
    )
    parser.add_argument(
        "--queries", type=int, default=200, help="poisoned queries timed with the overlay"
    )
    parser.add_argument(
        "--agree-queries",
        type=int,
        default=50,
        help="re-indexes (queries) for agreement at sizes <= 10000",
    )
    parser.add_argument(
        "--agree-queries-large",
        type=int,
        default=50,
        help="re-indexes (queries) for agreement at sizes > 10000",
    )
    args = parser.parse_args()
    if min(args.agree_queries, args.agree_queries_large) < 1:
        parser.error("--agree-queries and --agree-queries-large must be >= 1")
    run(args.sizes, args.queries, args.agree_queries, args.agree_queries_large)

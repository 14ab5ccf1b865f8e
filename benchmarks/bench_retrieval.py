"""Retrieval speed on a synthetic Zipf corpus: BM25 build and query, dense exact search.

Corpus (``make_corpus``): a seeded ``numpy.random.Generator`` makes ~50k distinct made-up
words (2–4 consonant-vowel syllables, none of them a stopword); each chunk is 10–40 words drawn
i.i.d. from a Zipf law over that vocabulary, p(rank r) ∝ 1/r (Zipf 1949), and ten chunks make
one ``Document`` (chunks are ``Chunk.of`` spans of it). Queries (``make_queries``) are 2–4
words that occur in the corpus, in three kinds taken in turn: common words (frequency rank
< 1000), rare words (rank ≥ 5000), and a mix of both.

Figures, each against a baseline measured in the same run on the same corpus and queries:

* BM25 index build: ``BM25Retriever().index(chunks)`` vs ``rank_bm25.BM25Okapi`` (given the
  same tokens, tokenising counted in both) and vs bm25s's own ``tokenize`` + ``index``.
* BM25 query latency, top 10, median over the queries (tokenising included everywhere):
  ``BM25Retriever.search`` vs bm25s's default ``retrieve`` ("bm25s default retrieve") and vs
  ``rank_bm25`` ``get_scores`` + ``np.argsort`` (fewer queries at 100k: ~0.1 s each).
* Dense exact search over an (N, 384) float32 matrix: ``DenseRetriever.search`` vs a full
  ``np.argsort`` of all N scores per query ("numpy full sort"), query embedding included in
  both. Embedding 100k chunks with MiniLM would take ~20 minutes here, so the
  embedder is hashed TF-IDF (a real, fitted embedder) projected to 384 dimensions
  (``HashingTfidfEmbedder`` needs a power-of-two width): search cost depends only on N × dim.
* Dense throughput: ``DenseRetriever`` has no batch search, so sequential ``search`` calls
  (queries/s) are compared with what a batch API could reach, numpy ``Q @ M.T`` on 64 queries
  at a time + ``argpartition`` ("numpy batched GEMM"); a ratio below 1 is that headroom.

Run: ``PYTHONPATH=src .venv/bin/python -m benchmarks.bench_retrieval [--sizes 10000,100000]``
(default both; about a minute on 2 shared cores).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchmarks._common import report
from probeguard.core.documents import Chunk, Document
from probeguard.models.embedders.base import Embedder

SEED = 20240611
VOCAB_SIZE = 50_000
ZIPF_EXPONENT = 1.0
CHUNK_WORDS = (10, 40)
CHUNKS_PER_DOC = 10
DENSE_DIM = 384
K = 10
_CONSONANTS = "bcdfghjklmnprstvwz"
_VOWELS = "aeiou"


# -- synthetic corpus -----------------------------------------------------------------------
@dataclass(frozen=True)
class SyntheticCorpus:
    """Chunks, the vocabulary (index = Zipf rank − 1) and each word's count in the corpus."""

    words: list[str]
    chunks: list[Chunk]
    counts: np.ndarray

    @property
    def n_tokens(self) -> int:
        return int(self.counts.sum())


def make_vocabulary(rng: np.random.Generator, size: int = VOCAB_SIZE) -> list[str]:
    """``size`` distinct made-up words of 2–4 syllables (CV or CVn), none an English
    stopword (bm25s's list), in the order drawn (that order is the Zipf rank)."""
    from bm25s.stopwords import STOPWORDS_EN

    syllables = [c + v for c in _CONSONANTS for v in _VOWELS]
    syllables += [s + "n" for s in syllables]
    stop = set(STOPWORDS_EN)
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < size:
        lengths = rng.integers(2, 5, size=size)
        picks = rng.integers(0, len(syllables), size=(size, 4))
        for n, row in zip(lengths, picks):
            word = "".join(syllables[i] for i in row[:n])
            if word not in seen and word not in stop:
                seen.add(word)
                words.append(word)
                if len(words) == size:
                    break
    return words


def make_corpus(n_chunks: int, seed: int = SEED, vocab_size: int = VOCAB_SIZE) -> SyntheticCorpus:
    """``n_chunks`` chunks of 10–40 Zipf-distributed words, ten chunks per document.
    Deterministic in ``(n_chunks, seed, vocab_size)``."""
    words = make_vocabulary(np.random.default_rng([seed, 0]), vocab_size)
    rng = np.random.default_rng([seed, n_chunks])
    p = 1.0 / np.arange(1, vocab_size + 1, dtype=np.float64) ** ZIPF_EXPONENT
    p /= p.sum()
    lengths = rng.integers(CHUNK_WORDS[0], CHUNK_WORDS[1] + 1, size=n_chunks)
    tokens = rng.choice(vocab_size, size=int(lengths.sum()), p=p)
    vocab = np.array(words, dtype=object)
    offsets = np.r_[0, np.cumsum(lengths)]
    texts = [" ".join(vocab[tokens[offsets[i] : offsets[i + 1]]]) for i in range(n_chunks)]
    chunks: list[Chunk] = []
    for d, first in enumerate(range(0, n_chunks, CHUNKS_PER_DOC)):
        parts = texts[first : first + CHUNKS_PER_DOC]
        doc = Document.create(" ".join(parts), id=f"syn-{d:06d}")
        start = 0
        for i, part in enumerate(parts):
            chunks.append(Chunk.of(doc, start, start + len(part), i))
            start += len(part) + 1
    counts = np.bincount(tokens, minlength=vocab_size)
    return SyntheticCorpus(words, chunks, counts)


def make_queries(corpus: SyntheticCorpus, n: int, seed: int = SEED) -> list[str]:
    """``n`` queries of 2–4 corpus words: common (rank < 1000), rare (rank ≥ 5000) and mixed,
    in turn. Every word occurs in the corpus at least once."""
    rng = np.random.default_rng([seed, 1, len(corpus.chunks)])
    present = np.flatnonzero(corpus.counts > 0)
    common = present[present < 1000]
    rare = present[present >= 5000]
    queries: list[str] = []
    for i in range(n):
        size = int(rng.integers(2, 5))
        kind = i % 3
        if kind == 0:
            ids = rng.choice(common, size=size, replace=False)
        elif kind == 1:
            ids = rng.choice(rare, size=size, replace=False)
        else:
            n_common = size // 2
            ids = np.r_[
                rng.choice(common, size=n_common, replace=False),
                rng.choice(rare, size=size - n_common, replace=False),
            ]
        queries.append(" ".join(corpus.words[j] for j in ids))
    return queries


# -- a 384-d real embedder ------------------------------------------------------------------
class ProjectedHashingEmbedder(Embedder):
    """Hashed TF-IDF (``HashingTfidfEmbedder(dim=512)``, fitted on the corpus) followed by a
    fixed Gaussian random projection to ``dim`` columns (Johnson–Lindenstrauss; seeded) and
    L2 normalisation. A benchmark stand-in for a 384-d sentence embedder at 100k chunks."""

    name = "hashing-projected"

    def __init__(self, dim: int = DENSE_DIM, source_dim: int = 512, seed: int = SEED) -> None:
        from probeguard.models.embedders.hashing import HashingTfidfEmbedder

        self.dim = dim
        self.inner: Embedder = HashingTfidfEmbedder(dim=source_dim, ngram=(1, 2))
        rng = np.random.default_rng([seed, 2])
        self.projection = (rng.standard_normal((source_dim, dim)) / np.sqrt(dim)).astype(np.float32)

    def fit(self, texts: Sequence[str]) -> None:
        from probeguard.pipeline.retrievers.dense import fitted_copy

        self.inner = fitted_copy(self.inner, texts)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = self.inner.embed(texts) @ self.projection
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "dim": self.dim, "inner": self.inner.config()}


# -- timing -----------------------------------------------------------------------------
def paired_medians(
    fns: Sequence[Callable[[Any], object]], items: Sequence[Any], warmup: int = 3
) -> list[float]:
    """Median wall time per call of each ``fn(item)`` over ``items``; the functions take turns
    on each item (after ``warmup`` untimed rounds), so that load from other processes on a
    shared machine falls on all of them alike."""
    for item in items[:warmup]:
        for fn in fns:
            fn(item)
    times: list[list[float]] = [[] for _ in fns]
    for item in items:
        for fn, bucket in zip(fns, times):
            start = time.perf_counter()
            fn(item)
            bucket.append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def paired_totals(fns: Sequence[Callable[[], object]], rounds: int = 3) -> list[float]:
    """Median over ``rounds`` of the wall time of each ``fn()``, the functions taking turns."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for fn, bucket in zip(fns, times):
            start = time.perf_counter()
            fn()
            bucket.append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """``(seconds, fn())`` for one call."""
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def _size_label(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


# -- benchmarks -------------------------------------------------------------------------
def bench_bm25(
    corpus: SyntheticCorpus, queries: Sequence[str], rank_queries: int, build_rounds: int
) -> None:
    import bm25s
    from rank_bm25 import BM25Okapi

    from probeguard.pipeline.retrievers.base import SearchRequest
    from probeguard.pipeline.retrievers.bm25 import BM25Retriever

    label = _size_label(len(corpus.chunks))
    texts = [c.text for c in corpus.chunks]
    ours = BM25Retriever()
    tokenize = BM25Retriever().tokenize  # the same tokens for every library
    built: dict[str, Any] = {}

    def build_ours() -> None:
        ours.index(corpus.chunks)

    def build_rank() -> None:
        built["rank"] = BM25Okapi([tokenize(t) for t in texts])

    def build_bm25s() -> None:
        model = bm25s.BM25()
        model.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
        built["bm25s"] = model

    ours_b, rank_b, bm25s_b = paired_totals(
        [build_ours, build_rank, build_bm25s], rounds=build_rounds
    )
    rounds = f"median of {build_rounds}" if build_rounds > 1 else "one build"
    report(
        f"BM25 build {label} chunks ({rounds}, ours)",
        ours_b,
        "s",
        "rank_bm25 BM25Okapi",
        rank_b,
        higher_is_better=False,
    )
    report(
        f"BM25 build {label} chunks ({rounds}, ours)",
        ours_b,
        "s",
        "bm25s tokenize+index",
        bm25s_b,
        higher_is_better=False,
    )

    model, rank = built["bm25s"], built["rank"]
    ours_q, bm25s_q = paired_medians(
        [
            lambda q: ours.search(SearchRequest(q, K)),
            lambda q: model.retrieve([tokenize(q)], k=K, show_progress=False),
        ],
        queries,
    )
    report(
        f"BM25 query {label} chunks, top {K}, median of {len(queries)} (ours)",
        ours_q * 1e3,
        "ms",
        "bm25s default retrieve",
        bm25s_q * 1e3,
        higher_is_better=False,
    )
    sample = list(queries[:rank_queries])
    ours_s, rank_q = paired_medians(
        [
            lambda q: ours.search(SearchRequest(q, K)),
            lambda q: np.argsort(rank.get_scores(tokenize(q)))[::-1][:K],
        ],
        sample,
        warmup=1,
    )
    report(
        f"BM25 query {label} chunks, top {K}, median of {len(sample)} (ours)",
        ours_s * 1e3,
        "ms",
        "rank_bm25 get_scores+argsort",
        rank_q * 1e3,
        higher_is_better=False,
    )


def bench_dense(corpus: SyntheticCorpus, queries: Sequence[str], batch: int = 64) -> None:
    from probeguard.pipeline.retrievers.base import SearchRequest
    from probeguard.pipeline.retrievers.dense import DenseRetriever

    label = _size_label(len(corpus.chunks))
    retriever = DenseRetriever(ProjectedHashingEmbedder())
    build, _ = timed(lambda: retriever.index(corpus.chunks))
    matrix = retriever.matrix
    embedder = retriever.embedder
    print(
        f"dense index {label} chunks: {matrix.shape[0]:,} x {matrix.shape[1]} float32 "
        f"({matrix.nbytes / 2**20:,.0f} MiB), embedded and indexed in {build:.2f} s "
        "(hashed TF-IDF, projected)",
        flush=True,
    )

    def ours(q: str) -> object:
        return retriever.search(SearchRequest(q, K))

    def full_sort(q: str) -> np.ndarray:
        scores = matrix @ embedder.embed([q])[0]
        return np.argsort(-scores)[:K]

    ours_q, base_q = paired_medians([ours, full_sort], queries)
    report(
        f"dense exact query {label} x {matrix.shape[1]}, top {K}, median of {len(queries)} (ours)",
        ours_q * 1e3,
        "ms",
        "numpy full sort",
        base_q * 1e3,
        higher_is_better=False,
    )

    def sequential() -> None:
        for q in queries:
            retriever.search(SearchRequest(q, K))

    def batched() -> None:
        q_matrix = embedder.embed(list(queries))
        for start in range(0, len(queries), batch):
            scores = q_matrix[start : start + batch] @ matrix.T
            part = np.argpartition(-scores, K - 1, axis=1)[:, :K]
            top = np.take_along_axis(scores, part, axis=1)
            np.take_along_axis(part, np.argsort(-top, axis=1), axis=1)

    batched()
    seq_s, batch_s = paired_totals([sequential, batched], rounds=3)
    report(
        f"dense throughput {label} x {matrix.shape[1]}, sequential search() "
        f"({len(queries)} queries, median of 3, ours)",
        len(queries) / seq_s,
        "queries/s",
        f"numpy batched GEMM+argpartition ({batch}/batch; ours has no batch API)",
        len(queries) / batch_s,
        higher_is_better=True,
    )


def run(
    sizes: Iterable[int] = (10_000, 100_000), n_queries: int = 200, rank_queries_100k: int = 50
) -> None:
    for n in sizes:
        corpus_s, corpus = timed(lambda n=n: make_corpus(n))
        queries = make_queries(corpus, n_queries)
        print(
            f"-- corpus {_size_label(n)}: {len(corpus.chunks):,} chunks, "
            f"{len(corpus.chunks) // CHUNKS_PER_DOC:,} documents, {corpus.n_tokens:,} words, "
            f"{int((corpus.counts > 0).sum()):,} distinct (vocabulary {len(corpus.words):,}, "
            f"Zipf s={ZIPF_EXPONENT}); {len(queries)} queries; made in {corpus_s:.1f} s",
            flush=True,
        )
        small = n <= 10_000
        bench_bm25(
            corpus,
            queries,
            n_queries if small else rank_queries_100k,
            build_rounds=3 if small else 1,
        )
        bench_dense(corpus, queries)


def parse_sizes(text: str) -> list[int]:
    return [int(s.replace("_", "")) for s in text.split(",") if s.strip()]


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
    parser.add_argument("--queries", type=int, default=200, help="queries per size")
    parser.add_argument(
        "--rank-queries-100k",
        type=int,
        default=50,
        help="queries for the slow rank_bm25 baseline above 10k chunks",
    )
    args = parser.parse_args()
    run(args.sizes, args.queries, args.rank_queries_100k)

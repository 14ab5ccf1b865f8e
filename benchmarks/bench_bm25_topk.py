"""BM25 query latency at 100k and 1M chunks: ours vs bm25s's numba and numpy backends.

Corpus and queries: ``bench_retrieval.make_corpus`` / ``make_queries`` (seeded; 10–40 words
a chunk drawn from a Zipf law over 50k made-up words; queries of 2–4 corpus words, common,
rare and mixed in turn). One index serves all three: ``BM25Retriever().index(chunks)`` builds
the bm25s model, and the baselines are that same model (``copy.copy``) retrieved through
bm25s's ``backend="numba"`` (one thread, ``n_threads=0``) and through its numpy backend with
numpy top-k (``backend_selection="numpy"``). So the scores are the same everywhere and the
figures compare only the query path. Tokenising (our tokenizer) is counted in all three.

Figures, per query, top 10, medians over the queries (``paired_medians``: the functions take
turns on each query, so load from other processes falls on all alike):

* ours (``BM25Retriever.search``: posting-list candidates, top k among them, hits built) vs
  bm25s numba ``retrieve``;
* ours vs bm25s numpy ``retrieve`` (fewer queries: ~5 ms each at 100k);
* the same split by query kind (common / rare / mixed words) for the numba baseline.

numba's first call compiles (seconds): it is made before timing. 1M chunks take ~1 minute to
generate and index and ~3 GiB of memory at peak (our index and bm25s's share one model).

Run: ``PYTHONPATH=src .venv/bin/python -m benchmarks.bench_bm25_topk [--sizes 100000,1000000]``
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import resource
from collections.abc import Callable, Iterable, Sequence

from benchmarks._common import report
from benchmarks.bench_retrieval import (
    K,
    _size_label,
    make_corpus,
    make_queries,
    paired_medians,
    parse_sizes,
    timed,
)
from probeguard.pipeline.retrievers.base import SearchRequest
from probeguard.pipeline.retrievers.bm25 import BM25Retriever

KINDS = ("common", "rare", "mixed")


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _compare(
    label: str,
    ours: Callable[[str], object],
    base: Callable[[str], object],
    base_name: str,
    queries: Sequence[str],
) -> None:
    ours_q, base_q = paired_medians([ours, base], queries)
    report(
        f"BM25 query {label}, top {K}, median of {len(queries)} (ours)",
        ours_q * 1e3,
        "ms",
        base_name,
        base_q * 1e3,
        higher_is_better=False,
    )


def bench_size(n: int, n_queries: int, numpy_queries: int) -> None:
    made_s, corpus = timed(lambda: make_corpus(n))
    queries = make_queries(corpus, n_queries)
    ours = BM25Retriever()
    build_s, _ = timed(lambda: ours.index(corpus.chunks))
    label = f"{_size_label(n)} chunks"
    print(
        f"-- {label}: {corpus.n_tokens:,} words; corpus made in {made_s:.1f} s, indexed in "
        f"{build_s:.1f} s; peak RSS so far {_peak_mib():,.0f} MiB",
        flush=True,
    )
    tokenize = ours.tokenize
    model = ours._bm25  # the bm25s model our retriever built: one index for all three

    def search(q: str) -> object:
        return ours.search(SearchRequest(q, K))

    def bm25s_numpy(q: str) -> object:
        return model.retrieve([tokenize(q)], k=K, show_progress=False, backend_selection="numpy")

    if importlib.util.find_spec("numba") is None:
        print("bm25s numba backend: skipped (pip install numba)", flush=True)
    else:
        numba_model = copy.copy(model)
        numba_model.backend = "numba"

        def bm25s_numba(q: str) -> object:
            return numba_model.retrieve([tokenize(q)], k=K, show_progress=False)

        bm25s_numba(queries[0])  # compile outside the clock
        _compare(label, search, bm25s_numba, "bm25s numba retrieve (1 thread)", queries)
        for i, kind in enumerate(KINDS):
            _compare(
                f"{label}, {kind} words",
                search,
                bm25s_numba,
                "bm25s numba retrieve (1 thread)",
                queries[i :: len(KINDS)],
            )
    _compare(label, search, bm25s_numpy, "bm25s numpy retrieve", list(queries[:numpy_queries]))


def run(sizes: Iterable[int], n_queries: int = 300, numpy_queries: int = 60) -> None:
    for n in sizes:
        bench_size(n, n_queries, numpy_queries)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes",
        type=parse_sizes,
        default=[100_000, 1_000_000],
        help="comma-separated corpus sizes in chunks (default 100000,1000000)",
    )
    parser.add_argument("--queries", type=int, default=300, help="queries per size")
    parser.add_argument(
        "--numpy-queries", type=int, default=60, help="queries for the slow numpy baseline"
    )
    args = parser.parse_args()
    run(args.sizes, args.queries, args.numpy_queries)

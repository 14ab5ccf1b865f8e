"""BM25 query latency at 100k and 1M chunks: ours vs bm25s's numba and numpy backends.

Corpus and queries: ``bench_retrieval.make_corpus`` / ``make_queries`` (seeded; 10–40 words
a chunk drawn from a Zipf law over 50k made-up words; queries of 2–4 corpus words, common,
rare and mixed in turn). ``BM25Retriever().index(chunks)`` builds the bm25s model; the
baselines are that same model (``copy.copy``, its posting arrays cast back to int32, bm25s's
default ``int_dtype``; ours keeps them as intp) retrieved through bm25s's ``backend="numba"``
(one thread, ``n_threads=0``) and through its numpy backend with numpy top-k
(``backend_selection="numpy"``). So the scores are the same everywhere and the figures
compare only the query path. Tokenising (our tokenizer) is counted in all of them.

Figures, per query, top 10, medians over the queries (``rotated_medians``: the functions take
turns on each query, so load from other processes falls on all alike, in an order rotated
from query to query, so none always runs first or after the same other):

* ours (``BM25Retriever.search``: scatter-add, MaxScore-pruned top k, hits built) vs bm25s
  numba ``retrieve``, over all queries and by query kind (common / rare / mixed words);
* with ``--before FILE`` (an older ``bm25.py``, e.g. ``git show main:src/probeguard/pipeline/
  retrievers/bm25.py > /tmp/bm25_before.py``), that version's ``BM25Retriever`` on its own
  index, timed in the same turns: "before" vs numba and ours vs "before";
* ours vs bm25s numpy ``retrieve`` (fewer queries: ~5 ms each at 100k).

numba's first call compiles (seconds): it is made before timing. Then every function runs
once over all the queries, untimed: measured at 1M chunks, the first round after an index
is built runs ~1.5x slower (0.18 vs 0.12 ms a query for ours), a memory warm-up, not the
query path. 1M chunks take ~1 minute to
generate and index and ~3 GiB of memory at peak (our index and bm25s's share one model).

Run: ``PYTHONPATH=src .venv/bin/python -m benchmarks.bench_bm25_topk [--sizes 100000,1000000]
[--before /tmp/bm25_before.py]``
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import resource
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._common import report
from benchmarks.bench_retrieval import (
    K,
    _size_label,
    make_corpus,
    make_queries,
    parse_sizes,
    timed,
)
from probeguard.pipeline.retrievers.base import SearchRequest
from probeguard.pipeline.retrievers.bm25 import BM25Retriever

KINDS = ("common", "rare", "mixed")


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rotated_medians(fns: Sequence[Callable[[str], object]], items: Sequence[str]) -> list[float]:
    """Median wall time per call of each ``fn(item)``; the functions take turns on each item,
    in an order rotated by one from item to item, so that each runs equally often first and
    after each other one (``paired_medians`` keeps one order: measured at 100k chunks, the
    function that ran first in each turn, right after bm25s numba's call, took ~20% longer)."""
    times: list[list[float]] = [[] for _ in fns]
    for j, item in enumerate(items):
        for i in range(len(fns)):
            f = (i + j) % len(fns)
            start = time.perf_counter()
            fns[f](item)
            times[f].append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def _compare(
    label: str,
    fns: dict[str, Callable[[str], object]],
    queries: Sequence[str],
    pairs: Sequence[tuple[str, str]],
) -> None:
    """Time every function in turns on each query, then one line per (ours, baseline) pair."""
    medians = dict(zip(fns, rotated_medians(list(fns.values()), queries)))
    for ours, base in pairs:
        report(
            f"BM25 query {label}, top {K}, median of {len(queries)} ({ours})",
            medians[ours] * 1e3,
            "ms",
            base,
            medians[base] * 1e3,
            higher_is_better=False,
        )


def _load_before(path: Path) -> Any:
    """The ``BM25Retriever`` class of an older ``bm25.py`` (imports resolved against ``src``)."""
    spec = importlib.util.spec_from_file_location("bm25_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.BM25Retriever


def _int32_copy(model: Any) -> Any:
    """The bm25s model with its posting arrays in bm25s's default int32 (a shallow copy)."""
    base = copy.copy(model)
    base.scores = {
        **model.scores,
        "indices": model.scores["indices"].astype(np.int32),
        "indptr": model.scores["indptr"].astype(np.int32),
    }
    base.int_dtype = "int32"
    return base


def bench_size(n: int, n_queries: int, numpy_queries: int, before: Path | None) -> None:
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
    model = _int32_copy(ours._bm25)  # the bm25s model our retriever built: one index for all
    fns: dict[str, Callable[[str], object]] = {"ours": lambda q: ours.search(SearchRequest(q, K))}
    pairs: list[tuple[str, str]] = []
    if before is not None:
        old = _load_before(before)()
        old.index(corpus.chunks)
        fns["before"] = lambda q: old.search(SearchRequest(q, K))
        pairs.append(("ours", "before"))
    if importlib.util.find_spec("numba") is None:
        print("bm25s numba backend: skipped (pip install numba)", flush=True)
    else:
        numba_model = copy.copy(model)
        numba_model.backend = "numba"
        numba = "bm25s numba retrieve (1 thread)"
        fns[numba] = lambda q: numba_model.retrieve([tokenize(q)], k=K, show_progress=False)
        fns[numba](queries[0])  # compile outside the clock
        pairs[:0] = [(name, numba) for name in fns if name != numba]
    for fn in fns.values():  # one untimed round: the first after a 1M build runs ~1.5x slow
        for q in queries:
            fn(q)
    _compare(label, fns, queries, pairs)
    for i, kind in enumerate(KINDS):
        _compare(f"{label}, {kind} words", fns, queries[i :: len(KINDS)], pairs)

    def bm25s_numpy(q: str) -> object:
        return model.retrieve([tokenize(q)], k=K, show_progress=False, backend_selection="numpy")

    numpy_fns = {"ours": fns["ours"], "bm25s numpy retrieve": bm25s_numpy}
    _compare(label, numpy_fns, list(queries[:numpy_queries]), [("ours", "bm25s numpy retrieve")])


def run(
    sizes: Iterable[int], n_queries: int = 300, numpy_queries: int = 60, before: Path | None = None
) -> None:
    for n in sizes:
        bench_size(n, n_queries, numpy_queries, before)
        print(f"peak RSS {_peak_mib():,.0f} MiB", flush=True)


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
    parser.add_argument(
        "--before",
        type=Path,
        default=None,
        help="an older bm25.py to time in the same turns (its BM25Retriever, own index)",
    )
    args = parser.parse_args()
    run(args.sizes, args.queries, args.numpy_queries, args.before)

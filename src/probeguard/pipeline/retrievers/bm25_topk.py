"""BM25's exact top k over bm25s's precomputed index, with MaxScore pruning of the selection.

The index (bm25s's eager CSC matrix): per term t, the chunk positions ``indices[s_t:e_t]``
(ascending, distinct) and their precomputed term scores ``data[s_t:e_t]`` (float32).
bm25s's ``get_scores_from_ids`` adds, per query term in query order (a repeated term twice),
``np.add.at(scores, indices[s:e], data[s:e])`` into a float32 zero vector.

``top_k`` does the same additions, in the same order, into a per-thread float32 scratch
vector (so every score is bitwise bm25s's), then selects the k best among the chunks that
share a query term, ties broken by chunk position, and zeroes what it touched.

Selection (MaxScore, Turtle & Flood 1995, "Query evaluation: strategies and optimizations";
Lin & Trotman's term-bound form). Each term's bound is ``B_t = max data[s_t:e_t]``, computed
once at index time (``term_bounds``); a query term occurring w times bounds a chunk's share
by ``w · B_t``. The seed list is that of the term with the largest bound: its k-th best
visible score θ is a lower bound of the final k-th score (k distinct chunks reach it).
Terms sorted by bound ascending, the longest prefix with ``S_j · (1 + n · 2⁻²⁰) < θ`` (S_j
the prefix's bound sum, n the query's length) is *non-essential*: a chunk found in none of
the other lists scores at most S_j (float32 rounding adds at most (1 + 2⁻²⁴)ⁿ⁻¹ < the
margin), below θ, so it cannot enter the top k and its entries are never gathered. Among
the essential lists' entries scoring >= θ (> 0 when θ = 0), ``best_k`` keeps the k best.

Measured (benchmarks/README.md, ``bench_bm25_topk``): the cost at 100k chunks is random
access (scatter-add, gather, reset: ~2 ns an entry with intp indices, twice that with int32)
and numpy call overheads; scoring an entry is no dearer than skipping it, so the bounds
prune the gather and the partition, not the additions (which exactness needs in order).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Span = tuple[int, int]
_MARGIN = 2.0**-20
"""Relative slack per query term on a bound sum (float32 rounding is 2⁻²⁴ per addition)."""


def term_bounds(data: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """``B_t = max(data[indptr[t]:indptr[t+1]])`` per term (float64; 0 for a term without
    postings): the largest score term t adds to any chunk."""
    starts = np.asarray(indptr[:-1])
    nonempty = np.asarray(indptr[1:]) > starts
    bounds = np.zeros(starts.shape[0], dtype=np.float64)
    if data.shape[0]:
        bounds[nonempty] = np.maximum.reduceat(data, starts[nonempty])
    return bounds


class Scratch:
    """One float32 zero vector of length n per thread, made on the thread's first search
    (4 bytes a chunk: 4 MB a thread at 1M chunks); a search leaves it all zeros."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._local = threading.local()

    def get(self) -> np.ndarray:
        acc: np.ndarray | None = getattr(self._local, "acc", None)
        if acc is None:
            acc = np.zeros(self.n, dtype=np.float32)
            self._local.acc = acc
        return acc


@dataclass(frozen=True)
class Postings:
    """bm25s's index as ``top_k`` reads it: ``indices`` (intp), ``data`` (float32), the
    per-term ``pointers`` (Python ints: a query reads a few) and ``bounds``."""

    indices: np.ndarray
    data: np.ndarray
    pointers: list[int]
    bounds: np.ndarray

    def span(self, term: int) -> Span:
        return self.pointers[term], self.pointers[term + 1]

    def positions(self, term: int) -> np.ndarray:
        s, e = self.span(term)
        return self.indices[s:e]


def top_k(
    acc: np.ndarray,
    postings: Postings,
    query_ids: Sequence[int],
    k: int,
    allowed: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(positions, scores)`` of the k best visible chunks with a positive score for the
    query's vocabulary ids (query order, duplicates kept), best first, ties by position;
    ``acc`` is an all-zero float32 scratch of length N, all zero again on return."""
    indices, data = postings.indices, postings.data
    try:
        for t in query_ids:
            s, e = postings.span(t)
            np.add.at(acc, indices[s:e], data[s:e])
        return _select(acc, postings, query_ids, k, allowed)
    finally:
        for t in dict.fromkeys(query_ids):
            acc[postings.positions(t)] = 0.0


def _select(
    acc: np.ndarray,
    postings: Postings,
    query_ids: Sequence[int],
    k: int,
    allowed: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """The k best among the essential lists' entries (see the module docstring)."""
    weights: dict[int, float] = {}
    for t in query_ids:  # a term counted w times adds at most w · B_t
        weights[t] = weights.get(t, 0.0) + float(postings.bounds[t])
    seed = max(weights, key=weights.__getitem__)
    theta = _seed_threshold(acc, postings.positions(seed), k, allowed)
    essential = _essential(weights, theta, len(query_ids))
    positions = _concat([postings.positions(t) for t in essential])
    scores = acc[positions]
    keep = scores >= theta if theta > 0.0 else scores > 0.0
    if allowed is not None:
        keep &= allowed[positions]
    return best_k(positions[keep], scores[keep], k, len(essential))


def _seed_threshold(
    acc: np.ndarray, positions: np.ndarray, k: int, allowed: np.ndarray | None
) -> float:
    """θ: the k-th largest visible score in one posting list (0 with fewer than k)."""
    if positions.shape[0] < k:
        return 0.0
    scores = acc[positions]
    if allowed is not None:
        scores = scores[allowed[positions]]
    m = scores.shape[0]
    if m < k:
        return 0.0
    return float(np.partition(scores, m - k)[m - k])


def _essential(weights: dict[int, float], theta: float, n_terms: int) -> list[int]:
    """The terms left once the longest low-bound prefix (bounds ascending) whose sum, with
    the rounding margin, stays below θ is dropped; the largest-bound term always stays."""
    ordered = sorted(weights, key=weights.__getitem__)
    total = 0.0
    dropped = 0
    for t in ordered[:-1]:
        total += weights[t]
        if total * (1.0 + n_terms * _MARGIN) >= theta:
            break
        dropped += 1
    return ordered[dropped:]


def _concat(parts: list[np.ndarray]) -> np.ndarray:
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def best_k(
    positions: np.ndarray, scores: np.ndarray, k: int, copies: int
) -> tuple[np.ndarray, np.ndarray]:
    """The k best distinct positions by (score desc, position asc) among entries where a
    position occurs at most ``copies`` times, always with the same score. The ``k·copies``
    largest entries hold at least k distinct positions, so every entry below the
    ``k·copies``-th largest score is dropped first (one partition); the rest is sorted and
    repeated positions (adjacent after the sort) are dropped."""
    m = positions.shape[0]
    wanted = k * copies
    if wanted < m:
        kth = np.partition(scores, m - wanted)[m - wanted]
        keep = scores >= kth
        positions, scores = positions[keep], scores[keep]
    order = np.lexsort((positions, -scores))
    positions, scores = positions[order], scores[order]
    if copies > 1 and positions.shape[0] > 1:
        first = np.empty(positions.shape[0], dtype=bool)
        first[0] = True
        np.not_equal(positions[1:], positions[:-1], out=first[1:])
        positions, scores = positions[first], scores[first]
    return positions[:k], scores[:k]

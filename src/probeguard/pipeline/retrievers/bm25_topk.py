"""BM25's exact top k over bm25s's precomputed index, with MaxScore pruning of the selection.

The index (bm25s's eager CSC matrix): per term t, the chunk positions ``indices[s_t:e_t]``
(ascending, distinct) and their precomputed term scores ``data[s_t:e_t]`` (float32).
bm25s's ``get_scores_from_ids`` adds, per query term in query order (a repeated term twice),
``np.add.at(scores, indices[s:e], data[s:e])`` into a float32 zero vector.

``top_k`` does the same additions, in the same order, into a per-thread float32 scratch
vector (so every score is bitwise bm25s's), then selects the k best among the chunks that
share a query term, ties broken by chunk position, and zeroes what it touched. A query with
at most ``SMALL_POSTINGS`` postings is scored in Python instead (same additions, same order).

Selection (MaxScore: Turtle & Flood 1995, "Query evaluation: strategies and optimizations",
IP&M 31(6), in its term-at-a-time form over precomputed per-term bounds). Each term's bound is ``B_t = max data[s_t:e_t]``, computed
once at index time (``term_bounds``); a query term occurring w times bounds a chunk's share
by ``w · B_t``. The seed list is that of the largest-bound term among those with at least
k postings: its k-th best visible score θ (accumulated over all the query's terms) is a
lower bound of the final k-th score, k distinct chunks reaching it (θ = 0 without one).
Terms sorted by bound ascending, the longest prefix with ``S_j · (1 + n · 2⁻²⁰) < θ`` (S_j
the prefix's bound sum, n the query's length) is *non-essential*: a chunk found in none of
the other lists scores at most S_j (float32 rounding adds at most (1 + 2⁻²⁴)ⁿ⁻¹ < the
margin), below θ, so it cannot enter the top k and its entries are never gathered. Among
the essential lists' entries scoring >= θ (> 0 when θ = 0), ``best_k`` keeps the k best.

Measured (benchmarks/README.md, ``bench_bm25_topk``): the cost at 100k chunks is random
access (scatter-add, gather, reset: ~2 ns an entry with intp indices, twice that with int32)
and numpy call overheads; scoring an entry is no dearer than skipping it, so the bounds
prune the gather and the partition, not the additions (which exactness needs in order). On
the bench's queries at 100k chunks the selection gathers 23% of the common-word queries'
postings and 26% of the mixed ones'.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Span = tuple[int, int]
_MARGIN = 2.0**-20
"""Relative slack per query term on a bound sum (float32 rounding is 2⁻²⁴ per addition)."""
_ZERO = np.float32(0.0)
SMALL_POSTINGS = 64
"""Up to this many postings in all (query terms counted with repeats) a query is scored in
Python: below it ~20 numpy calls of fixed cost (~0.5-3 µs each) outweigh the work."""


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


@dataclass(frozen=True, eq=False)
class Postings:
    """bm25s's index as ``top_k`` reads it: ``indices`` (intp), ``data`` (float32), the
    per-term ``pointers`` (Python ints: a query reads a few) and ``bounds``."""

    indices: np.ndarray
    data: np.ndarray
    pointers: list[int]
    bounds: np.ndarray


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
    pointers = postings.pointers
    spans = [(pointers[t], pointers[t + 1]) for t in query_ids]
    if sum(e - s for s, e in spans) <= SMALL_POSTINGS:
        return _top_k_small(postings, spans, k, allowed)
    indices, data = postings.indices, postings.data
    lists = {t: indices[s:e] for t, (s, e) in zip(query_ids, spans)}  # distinct terms
    try:
        for s, e in spans:
            np.add.at(acc, indices[s:e], data[s:e])
        weights = _weights(postings.bounds, query_ids)
        return _select(acc, lists, weights, len(query_ids), k, allowed)
    finally:
        for positions in lists.values():
            acc[positions] = 0.0


def _top_k_small(
    postings: Postings, spans: Sequence[Span], k: int, allowed: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """``top_k`` for a few postings, in Python: per chunk, a float32 total plus each term's
    score in query order (``np.float32 + float`` adds in float32 under NEP 50, the score
    being a float32 value: the very addition ``np.add.at`` makes), then a sort."""
    totals: dict[int, np.float32] = {}
    for s, e in spans:
        for p, c in zip(postings.indices[s:e].tolist(), postings.data[s:e].tolist()):
            totals[p] = totals.get(p, _ZERO) + c
    ranked = sorted(
        (-float(v), p) for p, v in totals.items() if v > 0 and (allowed is None or allowed[p])
    )[:k]
    return (
        np.array([p for _, p in ranked], dtype=np.int64),
        np.array([-v for v, _ in ranked], dtype=np.float32),
    )


def _weights(bounds: np.ndarray, query_ids: Sequence[int]) -> dict[int, float]:
    """Per distinct term, w · B_t: a term counted w times in the query adds at most that."""
    weights: dict[int, float] = {}
    for t in query_ids:
        weights[t] = weights.get(t, 0.0) + float(bounds[t])
    return weights


def _select(
    acc: np.ndarray,
    lists: dict[int, np.ndarray],
    weights: dict[int, float],
    n_terms: int,
    k: int,
    allowed: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """The k best among the essential lists' entries (see the module docstring);
    ``lists``: each distinct query term's posting positions; ``n_terms``: the query's
    length (additions per chunk, for the rounding margin)."""
    long_enough = [t for t in weights if lists[t].shape[0] >= k]
    seed = max(long_enough, key=weights.__getitem__) if long_enough else None
    theta = 0.0 if seed is None else _seed_threshold(acc, lists[seed], k, allowed)
    essential = _essential(weights, theta, n_terms)
    positions = _concat([lists[t] for t in essential])
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

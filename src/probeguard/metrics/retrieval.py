"""Retrieval metrics over ranked document ids (pure functions).

Definitions follow Manning, Raghavan & Schütze, *Introduction to Information Retrieval* (2008),
ch. 8, at document level: a ranked list ``ranked`` (best first, duplicates ignored after
their first appearance) is judged against a set of relevant ids.
"""

from __future__ import annotations

from typing import Iterable, Sequence


def dedupe(ranked: Iterable[str]) -> list[str]:
    """Ids in first-seen order (several chunks of one document count once, at their best rank)."""
    seen: dict[str, None] = {}
    for item in ranked:
        seen.setdefault(item, None)
    return list(seen)


def first_relevant_rank(ranked: Sequence[str], relevant: Iterable[str]) -> int | None:
    """1-based rank of the first relevant id in the de-duplicated list, or None."""
    rel = set(relevant)
    for rank, item in enumerate(dedupe(ranked), start=1):
        if item in rel:
            return rank
    return None


def hit_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> bool:
    """hit@k = 1 if any relevant id is within the first k (de-duplicated) ranks."""
    rank = first_relevant_rank(ranked, relevant)
    return rank is not None and rank <= k


def reciprocal_rank(ranked: Sequence[str], relevant: Iterable[str]) -> float:
    """RR = 1 / rank of the first relevant id, 0 when none is retrieved
    (Voorhees, TREC-8 QA track, 1999); MRR is its mean over questions."""
    rank = first_relevant_rank(ranked, relevant)
    return 0.0 if rank is None else 1.0 / rank


def recall_of(ranked: Sequence[str], relevant: Iterable[str], k: int | None = None) -> float:
    """recall@k = |relevant ∩ top-k| / |relevant|; NaN when nothing is relevant."""
    rel = set(relevant)
    if not rel:
        return float("nan")
    top = dedupe(ranked)
    if k is not None:
        top = top[:k]
    return len(rel.intersection(top)) / len(rel)

"""Retrieval metrics over ranked document ids (pure functions).

Definitions follow Manning, Raghavan & Schütze, *Introduction to Information Retrieval* (2008),
ch. 8, at document level, and agree with ``trec_eval`` (the measures ``P_k``, ``recall_k``,
``recip_rank``, ``success_k`` and ``ndcg_cut_k``; cross-checked against ``ir_measures`` 0.4.3
in ``tests/metrics/test_retrieval_ranking.py``).

Conventions shared by every function here:

* **Ranking.** ``ranked`` is a sequence of document ids, best first. ProbeGuard rankings are
  chunk-level with document ids, so a document retrieved by several chunks counts **once, at
  its best (first) rank**; later repeats are dropped before ranks are numbered (``dedupe``).
  ``k`` cuts the de-duplicated list.
* **Ties.** The order given is the rank order. Rankings built from scores (``rank_run``) sort
  by score descending with a *stable* sort, so equal scores keep their given order.
  (``trec_eval`` breaks ties by document id, descending: compare with distinct scores.)
* **Relevance.** ``relevant`` is either a collection of ids (binary relevance: each has grade
  1) or a mapping ``doc id → grade`` (graded, as in TREC qrels). A document is relevant when
  its grade is > 0 (``trec_eval``'s default ``-l 1`` for integer grades); a grade ≤ 0 is
  judged non-relevant and gains nothing.
* **Undefined is NaN.** With no relevant document there is nothing to find: every
  float metric returns NaN (unscored), not 0. (``trec_eval`` reports 0 there; this is the one
  intended difference.) A query with relevant documents and an empty ranking scores 0.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from probeguard.stats import Estimate, bootstrap_mean

Relevance = Iterable[str] | Mapping[str, float]
"""Binary relevance (ids) or graded relevance (``doc id → grade``)."""

RunRanking = Sequence[str] | Sequence[tuple[str, float]] | Mapping[str, float]
"""One query's retrieval: ranked ids, ``(doc id, score)`` pairs, or ``doc id → score``."""

__all__ = [
    "MEASURES",
    "Relevance",
    "RunRanking",
    "RunScores",
    "dedupe",
    "evaluate_run",
    "first_relevant_rank",
    "grades_of",
    "hit_at_k",
    "ndcg_at_k",
    "precision_at_k",
    "rank_run",
    "recall_of",
    "reciprocal_rank",
    "relevant_set",
    "score_query",
    "success_at_k",
]

_NAN = float("nan")


def dedupe(ranked: Iterable[str]) -> list[str]:
    """Ids in first-seen order (several chunks of one document count once, at their best rank)."""
    seen: dict[str, None] = {}
    for item in ranked:
        seen.setdefault(item, None)
    return list(seen)


def grades_of(relevant: Relevance) -> dict[str, float]:
    """``doc id → grade``: a mapping is copied, a collection of ids gets grade 1 each (a
    single string is one id, not a collection of characters)."""
    if isinstance(relevant, str):
        return {relevant: 1.0}
    if isinstance(relevant, Mapping):
        return {str(d): float(g) for d, g in relevant.items()}
    return {str(d): 1.0 for d in relevant}


def relevant_set(relevant: Relevance) -> set[str]:
    """The relevant ids: all ids of a collection (a single string is one id), or the ids
    with grade > 0 of a mapping."""
    if isinstance(relevant, str):
        return {relevant}
    if isinstance(relevant, Mapping):
        return {str(d) for d, g in relevant.items() if g > 0}
    return {str(d) for d in relevant}


def _top(ranked: Iterable[str], k: int | None) -> list[str]:
    top = dedupe(ranked)
    return top if k is None else top[:k]


def first_relevant_rank(ranked: Sequence[str], relevant: Relevance) -> int | None:
    """1-based rank of the first relevant id in the de-duplicated list, or None."""
    rel = relevant_set(relevant)
    for rank, item in enumerate(dedupe(ranked), start=1):
        if item in rel:
            return rank
    return None


def hit_at_k(ranked: Sequence[str], relevant: Relevance, k: int) -> bool:
    """hit@k = 1 if any relevant id is within the first k (de-duplicated) ranks.

    A yes/no verdict (False when nothing is relevant); ``success_at_k`` is the same measure
    as a number, NaN when nothing is relevant."""
    rank = first_relevant_rank(ranked, relevant)
    return rank is not None and rank <= k


def success_at_k(ranked: Sequence[str], relevant: Relevance, k: int) -> float:
    """hit@k as a number (``trec_eval`` ``success_k``): 1.0 when some relevant id is in the
    top k, else 0.0; NaN when nothing is relevant."""
    if not relevant_set(relevant):
        return _NAN
    return float(hit_at_k(ranked, relevant, k))


def reciprocal_rank(ranked: Sequence[str], relevant: Relevance, k: int | None = None) -> float:
    """RR = 1 / rank of the first relevant id, 0 when none is retrieved (within the top k,
    when ``k`` is given) (Voorhees, TREC-8 QA track, 1999; ``trec_eval`` ``recip_rank``);
    MRR is its mean over questions. NaN when nothing is relevant."""
    if not relevant_set(relevant):
        return _NAN
    rank = first_relevant_rank(_top(ranked, k), relevant)
    return 0.0 if rank is None else 1.0 / rank


def recall_of(ranked: Sequence[str], relevant: Relevance, k: int | None = None) -> float:
    """recall@k = |relevant ∩ top-k| / |relevant|; NaN when nothing is relevant."""
    rel = relevant_set(relevant)
    if not rel:
        return _NAN
    return len(rel.intersection(_top(ranked, k))) / len(rel)


def precision_at_k(ranked: Sequence[str], relevant: Relevance, k: int) -> float:
    """P@k = |relevant ∩ top-k| / k (``trec_eval`` ``P_k``): the divisor is k even when fewer
    than k documents were retrieved, so a short list is not rewarded. NaN when nothing is
    relevant."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    rel = relevant_set(relevant)
    if not rel:
        return _NAN
    return len(rel.intersection(_top(ranked, k))) / k


def ndcg_at_k(ranked: Sequence[str], relevant: Relevance, k: int) -> float:
    """nDCG@k (Järvelin & Kekäläinen 2002, "Cumulated gain-based evaluation of IR techniques",
    ACM TOIS 20(4)), in ``trec_eval``'s ``ndcg_cut_k`` convention:

        DCG@k  = Σ_{i=1..k} gain(d_i) / log2(i + 1)
        nDCG@k = DCG@k / IDCG@k

    with linear gain ``gain(d) = max(grade(d), 0)`` (the grade itself, not the exponential
    2^grade − 1 of Burges et al. 2005; unjudged documents gain 0), discount log2(i + 1) at
    every rank (rank 1 undiscounted), and IDCG@k the DCG@k of all judged grades sorted in
    decreasing order (the ideal ranking, over the qrels, not over what was retrieved).
    Binary relevance (a collection of ids) is graded relevance with every grade 1. NaN when
    IDCG = 0 (nothing is relevant)."""
    grades = grades_of(relevant)
    ideal = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 1) for i, g in enumerate(ideal, start=1))
    if idcg <= 0:
        return _NAN
    dcg = sum(
        max(grades.get(d, 0.0), 0.0) / math.log2(i + 1)
        for i, d in enumerate(_top(ranked, k), start=1)
    )
    return dcg / idcg


# --------------------------------------------------------------------------- batch helpers

_MEASURE = re.compile(r"^(hit|precision|recall|mrr|ndcg)(?:@([1-9][0-9]*))?$")
MEASURES: tuple[str, ...] = ("hit@k", "precision@k", "recall@k", "mrr", "mrr@k", "ndcg@k")
"""Measure names accepted by ``score_query``/``evaluate_run`` (k a positive integer; only
``mrr`` and ``recall`` may omit it)."""


def _parse(measure: str) -> tuple[str, int | None]:
    m = _MEASURE.match(measure.strip().lower())
    if m is None or (m.group(2) is None and m.group(1) not in ("mrr", "recall")):
        raise ValueError(f"unknown measure {measure!r}; expected one of {', '.join(MEASURES)}")
    return m.group(1), None if m.group(2) is None else int(m.group(2))


def rank_run(ranking: RunRanking) -> list[str]:
    """Ranked doc ids of one query's retrieval. A sequence of ids is taken in the order
    given; ``(doc id, score)`` pairs or a ``doc id → score`` mapping are sorted by score,
    descending, with a stable sort (ties keep the order given). Duplicates are kept here and
    dropped by the metrics (best rank counts)."""
    if isinstance(ranking, Mapping):
        pairs = [(str(d), float(s)) for d, s in ranking.items()]
    else:
        items = list(ranking)
        if all(isinstance(x, str) for x in items):
            return [str(x) for x in items]
        pairs = [(str(d), float(s)) for d, s in items]
    return [d for d, _ in sorted(pairs, key=lambda p: -p[1])]


def score_query(ranked: Sequence[str], relevant: Relevance, measure: str) -> float:
    """One measure (a name from ``MEASURES``, e.g. ``"ndcg@10"``) for one ranked list."""
    name, k = _parse(measure)
    if name == "hit":
        return success_at_k(ranked, relevant, k)  # type: ignore[arg-type]
    if name == "precision":
        return precision_at_k(ranked, relevant, k)  # type: ignore[arg-type]
    if name == "recall":
        return recall_of(ranked, relevant, k)
    if name == "mrr":
        return reciprocal_rank(ranked, relevant, k)
    return ndcg_at_k(ranked, relevant, k)  # type: ignore[arg-type]


@dataclass(frozen=True)
class RunScores:
    """One measure over a run: the per-query values (NaN = unscored), their mean with a
    seeded percentile-bootstrap interval over the scored queries (``mean.n`` of them), and
    the number of unscored queries."""

    measure: str
    per_query: dict[str, float]
    mean: Estimate
    unscored: int

    def summary(self) -> dict[str, object]:
        """JSON-ready: the mean as an Estimate dict and the unscored count."""
        return {"mean": self.mean.model_dump(), "unscored": self.unscored}


def evaluate_run(
    run: Mapping[str, RunRanking],
    qrels: Mapping[str, Relevance],
    measures: Sequence[str],
    *,
    seed: int,
    binary: bool = False,
) -> dict[str, RunScores]:
    """Each measure over every query of ``run`` ∪ ``qrels``.

    ``run`` maps a query id to its retrieval (see ``rank_run``); ``qrels`` maps a query id to
    its relevance (ids, or ``doc id → grade``). A query judged in ``qrels`` but absent from
    ``run`` has an empty ranking and scores 0 where it has relevant documents (like
    ``trec_eval -c``); a query without relevant documents (absent from ``qrels`` or all grades
    ≤ 0) is NaN — unscored, counted in ``unscored``, left out of the mean. ``binary=True``
    turns every grade > 0 into 1 (binary nDCG from graded qrels). The mean's interval is
    ``probeguard.stats.bootstrap_mean`` with ``seed``.
    """
    for measure in measures:  # validate every name before any work
        _parse(measure)
    queries = list(dict.fromkeys([*qrels, *run]))
    ranked = {q: rank_run(run.get(q, ())) for q in queries}
    rel: dict[str, Relevance] = {}
    for q in queries:
        r = qrels.get(q, ())
        rel[q] = relevant_set(r) if binary else r
    out: dict[str, RunScores] = {}
    for measure in measures:
        values = {q: score_query(ranked[q], rel[q], measure) for q in queries}
        unscored = sum(1 for v in values.values() if math.isnan(v))
        out[measure] = RunScores(
            measure=measure,
            per_query=values,
            mean=bootstrap_mean(list(values.values()), seed=seed),
            unscored=unscored,
        )
    return out

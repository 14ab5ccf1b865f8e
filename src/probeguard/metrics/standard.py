"""The standard RAG metrics of one record (question, answer, retrieved contexts, optional
reference), all derived from ONE claim×chunk judgment (the RAGChecker design).

Per record:

1. the answer is decomposed into atomic claims (``detectors.claims.decompose``); its
   factual claims (hedges left out) and the ground truth's factual claims are judged
   against the contexts in a single call, *with the question* (``judges.judge_claims``: a
   bare claim such as "1774" is anchored by the question's words, so it is supported only by
   a sentence about the question) — one matrix, rows ``[answer claims…, ground-truth
   claims…]``, split afterwards;
2. every metric is a pure function of that matrix (``metrics.judged``), of relevance
   verdicts, or of the strings:

   ========================  =====================================================================
   faithfulness              answer rows (``faithfulness``: supported / scored claims; findings)
   context_recall            ground-truth rows (``context_recall``); NaN without a ground truth
   context_precision         rank-aware average precision over the contexts' relevance: the
                             reference labels (``retrievalRelevance`` or gold evidence ids) when
                             given, else judge-decided (a chunk is relevant when it supports a
                             ground-truth claim, or an answer claim without a ground truth)
   contextual_relevancy      relevant statements / scored statements of the contexts
   answer_relevancy          ``answer_relevancy_offline`` with the offline relevance judge,
                             else ``answer_relevancy`` over the LLM judge's verdicts
   exact_match, token_f1,    SQuAD v1.1 EM, word-level F1 and containment against the gold
   containment               answers (``metrics.lexical``); NaN without one
   ========================  =====================================================================

A metric with nothing to score is NaN with its reason and counts as unscored (never 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from probeguard.core.artifacts import FROZEN_RESULT
from probeguard.core.pipeline import Context
from probeguard.detectors.claims import decompose, factual
from probeguard.detectors.factory import Judges
from probeguard.detectors.judges import Judgment, judge_claims
from probeguard.metrics.judged import (
    FaithfulnessResult,
    MetricResult,
    answer_relevancy,
    answer_relevancy_offline,
    context_precision,
    context_recall,
    context_statements,
    contextual_relevancy,
    faithfulness,
    relevance_from_judgment,
)
from probeguard.metrics.lexical import containment, exact_match, token_f1

__all__ = [
    "METRICS",
    "MetricScore",
    "RecordScores",
    "StandardScore",
    "score_standard",
    "split_judgment",
    "unscored",
]

METRICS: tuple[str, ...] = (
    "context_precision",
    "context_recall",
    "contextual_relevancy",
    "faithfulness",
    "answer_relevancy",
    "exact_match",
    "token_f1",
    "containment",
)
"""Every standard metric, in report order."""
NAN = float("nan")


class MetricScore(BaseModel):
    """One metric of one record, as saved (``MetricResult.as_dict``)."""

    model_config = FROZEN_RESULT

    value: float | None
    """The score; None when undefined (the reason says why)."""
    n: int
    """Items scored (claims, chunks, statements)."""
    unscored: int
    """Items the judge could not decide."""
    reason: str = ""
    detail: dict[str, Any] = Field(default_factory=dict)
    """Metric-specific detail (ranks, per-chunk shares, missing claims)."""


class RecordScores(BaseModel):
    """The standard metrics of one record as saved: every metric, where context precision's
    relevance came from, and the faithfulness findings (one per answer claim)."""

    model_config = FROZEN_RESULT

    metrics: dict[str, MetricScore]
    """Metric → its score, in ``METRICS`` order."""
    precision_source: str
    """``reference`` (labels or gold ids), ``judge`` or ``none`` (no contexts)."""
    claims: list[dict[str, Any]] = Field(default_factory=list)
    """``ClaimFinding.as_dict`` per answer claim."""


@dataclass(frozen=True)
class StandardScore:
    """One record's metrics, the judgment they came from, and the faithfulness findings."""

    metrics: dict[str, MetricResult]
    judgment: Judgment
    answer_claims: int
    """Rows of ``judgment`` that are answer claims (the rest are ground-truth claims)."""
    precision_source: str
    """``reference`` (labels or gold ids), ``judge`` or ``none`` (no contexts)."""

    @property
    def faithfulness(self) -> FaithfulnessResult:
        return self.metrics["faithfulness"]  # type: ignore[return-value]

    def value(self, name: str) -> float:
        return self.metrics[name].value

    def as_dict(self) -> dict[str, Any]:
        """JSON form: each metric's value (null when NaN), n, unscored, reason, detail; the
        faithfulness findings under ``claims``; the judgment matrix."""
        return {**self._saved(), "judgment": self.judgment.as_dict()}

    def _saved(self) -> dict[str, Any]:
        metrics = {k: self.metrics[k].as_dict() for k in METRICS}
        claims = metrics["faithfulness"].pop("claims", [])  # written once, below
        return {"metrics": metrics, "precision_source": self.precision_source, "claims": claims}

    def scores(self) -> RecordScores:
        """The saved form (``as_dict`` without the judgment matrix, which is not built)."""
        return RecordScores.model_validate(self._saved())


def split_judgment(judgment: Judgment, rows: int) -> tuple[Judgment, Judgment]:
    """The first ``rows`` claims and the rest, as two judgments over the same contexts."""
    head = Judgment(
        judgment.claims[:rows],
        judgment.contexts,
        judgment.verdicts[:rows],
        judgment.judge,
        judgment.detail,
    )
    tail = Judgment(
        judgment.claims[rows:],
        judgment.contexts,
        judgment.verdicts[rows:],
        judgment.judge,
        judgment.detail,
    )
    return head, tail


def _lexical(fn: Any, answer: str, golds: Sequence[str]) -> MetricResult:
    if not golds:
        return MetricResult(NAN, 0, 0, "no ground truth")
    return MetricResult(fn(answer, list(golds)), 1)


def score_standard(
    question: str,
    answer: str,
    contexts: Sequence[Context],
    judges: Judges,
    *,
    ground_truth: str | None = None,
    golds: Sequence[str] | None = None,
    relevance: Sequence[bool] | None = None,
) -> StandardScore:
    """Every standard metric of one record (table in the module docstring).

    ``ground_truth`` is the reference answer whose claims context recall checks; ``golds``
    the acceptable answers for EM/F1/containment (default ``[ground_truth]``);
    ``relevance`` the reference relevance of each context, rank 1 first (same length)."""
    if relevance is not None and len(relevance) != len(contexts):
        raise ValueError(f"{len(relevance)} relevance labels for {len(contexts)} contexts")
    golds = list(golds) if golds is not None else ([ground_truth] if ground_truth else [])
    claims = decompose(answer)
    facts = factual(claims)
    gt_facts = factual(decompose(ground_truth)) if ground_truth else []
    judgment = judge_claims(
        judges.claims,
        [*facts, *gt_facts],  # AtomicClaims: a judge may read their resolved pronouns
        list(contexts),
        question,
    )
    answer_j, truth_j = split_judgment(judgment, len(facts))

    metrics: dict[str, MetricResult] = {"faithfulness": faithfulness(answer_j)}
    metrics["context_recall"] = (
        context_recall(truth_j) if ground_truth else MetricResult(NAN, 0, 0, "no ground truth")
    )
    if relevance is not None:
        source, cp = "reference", context_precision(list(relevance))
    elif not contexts:
        source, cp = "none", context_precision([])
    elif not (gt_facts or facts):
        source, cp = (
            "judge",
            MetricResult(NAN, 0, len(contexts), "no claim to decide relevance with"),
        )
    else:
        source = "judge"
        cp = context_precision(relevance_from_judgment(truth_j if gt_facts else answer_j))
    metrics["context_precision"] = cp
    texts = [c.text for c in contexts]
    metrics["contextual_relevancy"] = contextual_relevancy(
        [judges.relevance.relevance(question, s) for s in context_statements(texts)]
    )
    if judges.offline_relevance:
        metrics["answer_relevancy"] = answer_relevancy_offline(question, claims)
    else:
        metrics["answer_relevancy"] = answer_relevancy(
            claims, judges.relevance.relevance(question, [c.text for c in claims]) if claims else []
        )
    metrics["exact_match"] = _lexical(exact_match, answer, golds)
    metrics["token_f1"] = _lexical(token_f1, answer, golds)
    metrics["containment"] = _lexical(containment, answer, golds)
    return StandardScore({k: metrics[k] for k in METRICS}, judgment, len(facts), source)


def unscored(reason: str) -> dict[str, MetricResult]:
    """Every metric NaN with ``reason`` (a record whose pipeline call failed)."""
    return {k: MetricResult(NAN, 0, 0, reason) for k in METRICS}

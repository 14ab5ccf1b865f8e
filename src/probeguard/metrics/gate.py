"""How a retrieval ``min_score`` gate behaves: can the retriever's top score tell an
answerable question from an unanswerable one?

A gate refuses a question when no retrieved chunk scores at least ``t`` — i.e. when the
question's *top score* ``s`` (the best retrieved chunk's score; ``-inf`` when nothing was
retrieved) is below ``t``. Over answerable questions A and unanswerable questions U:

    false_refusal(t) = |{a ∈ A : s_a < t}| / |A|      (a benign question wrongly refused)
    abstention(t)    = |{u ∈ U : s_u < t}| / |U|      (an unanswerable question refused)
    J(t)             = abstention(t) − false_refusal(t)   (Youden 1950, "Index for rating
                                                            diagnostic tests")

The best gate maximises J over the observed scores (ties: the lowest threshold). How well
*any* threshold can separate the two is the area under the ROC curve of the top score,

    AUROC = P(s_a > s_u) + ½·P(s_a = s_u)          (Hanley & McNeil 1982; Mann–Whitney U)

computed over all |A|·|U| pairs: 0.5 means the score carries no information about
answerability. Rank-fused scores (reciprocal rank fusion) are bounded by construction — the
top hit of every query scores about ``2 / (rrf_k + 1)`` — so they *saturate*: the spread
``(q95 − q05) / |q95|`` of the top scores is small, and a threshold either refuses almost
everything or almost nothing. ``saturated`` flags a spread below ``SATURATION_SPREAD``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from probeguard.core.pipeline import PipelineOutput
from probeguard.core.records import CaseRecord
from probeguard.stats import wilson

Scores = Sequence[float] | npt.NDArray[np.floating[Any]]
"""Top scores: a sequence of floats or a float array."""

SATURATION_SPREAD = 0.25
"""Top-score spread ``(q95 − q05) / |q95|`` below which the score is called saturated."""


def top_score(output: PipelineOutput) -> float:
    """The best retrieved chunk's score; ``-inf`` when nothing was retrieved (a gate that
    already tripped, or an empty index). NaN when the pipeline reports no scores."""
    scores = [r.score for r in output.retrieved]
    if not scores:
        return -math.inf
    known = [s for s in scores if s is not None]
    return max(known) if known else math.nan


def auroc(positives: Scores, negatives: Scores) -> float:
    """P(positive > negative) + ½·P(tie) over all pairs; NaN when either side is empty."""
    pos = np.asarray(positives, dtype=float)
    neg = np.asarray(negatives, dtype=float)
    if pos.size == 0 or neg.size == 0:
        return math.nan
    greater = (pos[:, None] > neg[None, :]).sum()
    ties = (pos[:, None] == neg[None, :]).sum()
    return float((greater + 0.5 * ties) / (pos.size * neg.size))


def gate_rates(answerable: Scores, unanswerable: Scores, threshold: float) -> dict[str, Any]:
    """False-refusal and abstention rates (Wilson) of the gate ``s < threshold``."""
    a = np.asarray(answerable, dtype=float)
    u = np.asarray(unanswerable, dtype=float)
    return {
        "min_score": threshold,
        "false_refusal": wilson(int((a < threshold).sum()), int(a.size)).model_dump(),
        "abstention": wilson(int((u < threshold).sum()), int(u.size)).model_dump(),
    }


def best_gate(answerable: Scores, unanswerable: Scores) -> dict[str, Any] | None:
    """The threshold among the observed finite scores (and just above the highest) that
    maximises Youden's J; None when either side is empty."""
    a = np.asarray(answerable, dtype=float)
    u = np.asarray(unanswerable, dtype=float)
    if a.size == 0 or u.size == 0:
        return None
    finite = np.concatenate([a, u])
    finite = finite[np.isfinite(finite)]
    if finite.size == 0:
        return None
    candidates = np.unique(finite)
    candidates = np.append(candidates, np.nextafter(candidates[-1], math.inf))
    best_t, best_j = float(candidates[0]), -math.inf
    for t in candidates:
        j = float((u < t).mean() - (a < t).mean())
        if j > best_j + 1e-12:
            best_t, best_j = float(t), j
    return {**gate_rates(a, u, best_t), "youden_j": round(best_j, 6)}


def _spread(scores: np.ndarray) -> float:
    finite = scores[np.isfinite(scores)]
    if finite.size < 2:
        return math.nan
    q05, q95 = np.quantile(finite, [0.05, 0.95])
    return float((q95 - q05) / abs(q95)) if q95 != 0 else math.nan


def _describe(scores: np.ndarray) -> dict[str, Any]:
    finite = scores[np.isfinite(scores)]
    if finite.size == 0:
        return {"n": int(scores.size), "empty": int(scores.size)}
    return {
        "n": int(scores.size),
        "empty": int(scores.size - finite.size),
        "min": round(float(finite.min()), 6),
        "median": round(float(np.median(finite)), 6),
        "max": round(float(finite.max()), 6),
    }


def gate_analysis(
    answerable: Sequence[float], unanswerable: Sequence[float], configured: float | None = None
) -> dict[str, Any]:
    """Top-score distributions, AUROC, saturation, the configured gate's rates (when one is
    set) and the best gate (module docstring). NaN scores (no scores reported) are dropped."""
    a = np.asarray([s for s in answerable if not math.isnan(s)], dtype=float)
    u = np.asarray([s for s in unanswerable if not math.isnan(s)], dtype=float)
    spread = _spread(np.concatenate([a, u]))
    result: dict[str, Any] = {
        "answerable_top_score": _describe(a),
        "unanswerable_top_score": _describe(u),
        "auroc": auroc(a, u),
        "spread": spread,
        "saturated": bool(not math.isnan(spread) and spread < SATURATION_SPREAD),
        "configured_gate": gate_rates(a, u, configured) if configured is not None else None,
        "best_gate": best_gate(a, u),
    }
    return result


def gate_scores(records: Sequence[CaseRecord]) -> tuple[list[float], list[float]]:
    """Top scores of answerable golden questions and of unanswerable questions (golden
    ``abstain`` ones and probe cases expecting abstention), asked plainly (the default
    variation), each distinct question once."""
    answerable: dict[str, float] = {}
    unanswerable: dict[str, float] = {}
    for record in records:
        case = record.case
        if record.output is None or not case.variation.is_default():
            continue
        if case.expected.mode == "abstain":
            unanswerable.setdefault(case.question, top_score(record.output))
        elif case.probe == "golden" and case.expected.mode == "answer":
            answerable.setdefault(case.question, top_score(record.output))
    return list(answerable.values()), list(unanswerable.values())

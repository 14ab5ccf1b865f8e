"""Binary classification against human labels: the confusion counts, balanced accuracy,
per-class precision and recall (Wilson), and the decision threshold chosen on a dev split.

With labels y ∈ {True (positive: "supported"), False} and predictions ŷ::

    TP = |{ŷ ∧ y}|   FP = |{ŷ ∧ ¬y}|   TN = |{¬ŷ ∧ ¬y}|   FN = |{¬ŷ ∧ y}|
    TPR = TP / (TP + FN)      TNR = TN / (TN + FP)
    BA  = (TPR + TNR) / 2     (balanced accuracy; Brodersen et al. 2010, "The balanced
                               accuracy and its posterior distribution"; the measure of
                               LLM-AggreFact, Tang et al. 2024)

NaN when either class is absent (undefined is not zero). Per class: the positive class's
precision TP/(TP+FP) and recall TP/(TP+FN); the negative class's precision TN/(TN+FN) and
recall TN/(TN+FP), each a Wilson estimate (``stats.estimate.wilson``).

``best_threshold`` picks, on dev scores, the threshold t of the rule ŷ = (score ≥ t) that
maximises BA over the candidates {each distinct dev score} ∪ {+∞}; ties go to the larger t
(the stricter judge). NaN scores (unscored) take no part.

``stable_threshold`` (the bench's rule) is the **one-standard-error rule** (Breiman, Friedman,
Olshen & Stone 1984, *Classification and Regression Trees* §3.4.3; Hastie, Tibshirani &
Friedman 2009 §7.10) applied to that argmax, which is noisy on a small dev split: with BA*
the best dev BA, at its cut t*, and::

    SE = ½·√( TPR*(1 − TPR*)/n₊ + TNR*(1 − TNR*)/n₋ )     (binomial SE of BA at t*)

the plateau is every finite candidate cut c with BA(c) ≥ BA* − SE, and the threshold is the
midpoint (min c + max c)/2 of the plateau's range (+∞ when the plateau holds no finite cut):
the centre of the band of cuts the dev split cannot tell apart, rather than its noisiest
point. Chosen over the argmax, a bootstrap-median argmax, a window-smoothed argmax and the
plateau's median cut (``one_se_plateau``) by
repeated two-fold cross-validation on the dev splits only (every judge and the baseline
alike; ``probeguard bench judges`` module doc).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from probeguard.core.estimate import Estimate
from probeguard.stats.estimate import wilson

__all__ = [
    "ClassRates",
    "Confusion",
    "balanced_accuracy",
    "best_threshold",
    "class_rates",
    "stable_threshold",
]

NAN = math.nan
Flags = Sequence[bool] | np.ndarray
"""Booleans as a list or a numpy array."""


@dataclass(frozen=True)
class Confusion:
    """The four counts of the module doc."""

    tp: int
    fp: int
    tn: int
    fn: int

    @classmethod
    def of(cls, predicted: Flags, truth: Flags) -> Confusion:
        if len(predicted) != len(truth):
            raise ValueError(f"{len(predicted)} predictions for {len(truth)} labels")
        p = np.asarray(predicted, dtype=bool)
        t = np.asarray(truth, dtype=bool)
        return cls(
            tp=int((p & t).sum()),
            fp=int((p & ~t).sum()),
            tn=int((~p & ~t).sum()),
            fn=int((~p & t).sum()),
        )

    @property
    def balanced_accuracy(self) -> float:
        """(TPR + TNR) / 2; NaN when a class is absent."""
        pos, neg = self.tp + self.fn, self.tn + self.fp
        if pos == 0 or neg == 0:
            return NAN
        return (self.tp / pos + self.tn / neg) / 2


def balanced_accuracy(predicted: Flags, truth: Flags) -> float:
    """BA of the module doc."""
    return Confusion.of(predicted, truth).balanced_accuracy


@dataclass(frozen=True)
class ClassRates:
    """Per-class precision and recall (Wilson) of the module doc."""

    precision_positive: Estimate
    recall_positive: Estimate
    precision_negative: Estimate
    recall_negative: Estimate


def class_rates(predicted: Flags, truth: Flags) -> ClassRates:
    """Precision and recall of each class, with Wilson intervals."""
    c = Confusion.of(predicted, truth)
    return ClassRates(
        precision_positive=wilson(c.tp, c.tp + c.fp),
        recall_positive=wilson(c.tp, c.tp + c.fn),
        precision_negative=wilson(c.tn, c.tn + c.fn),
        recall_negative=wilson(c.tn, c.tn + c.fp),
    )


def best_threshold(scores: Sequence[float] | np.ndarray, truth: Flags) -> float:
    """The dev threshold of the module doc; NaN when no score is defined or a class is
    absent among the scored."""
    s, t = _scored(scores, truth)
    if s.size == 0 or t.all() or not t.any():
        return NAN
    best, best_ba = NAN, -1.0
    for cut in sorted(set(s.tolist()) | {math.inf}, reverse=True):
        ba = Confusion.of(s >= cut, t).balanced_accuracy
        if ba > best_ba:
            best, best_ba = cut, ba
    return float(best)


def _scored(scores: Sequence[float] | np.ndarray, truth: Flags) -> tuple[np.ndarray, np.ndarray]:
    """The defined scores and their labels."""
    s = np.asarray(scores, dtype=float)
    t = np.asarray(truth, dtype=bool)
    keep = ~np.isnan(s)
    return s[keep], t[keep]


def _ba_at_cuts(s: np.ndarray, t: np.ndarray, cuts: np.ndarray) -> np.ndarray:
    """BA of "score ≥ c" for every cut c at once (both classes present): TPR(c) = |{positive
    scores ≥ c}| / n₊, TNR(c) = |{negative scores < c}| / n₋; O((n + cuts)·log n)."""
    pos, neg = np.sort(s[t]), np.sort(s[~t])
    tp = pos.size - np.searchsorted(pos, cuts, side="left")
    tn = np.searchsorted(neg, cuts, side="left")
    return (tp / pos.size + tn / neg.size) / 2


def one_se_plateau(scores: Sequence[float] | np.ndarray, truth: Flags) -> np.ndarray:
    """The finite dev cuts c with BA(c) ≥ BA* − SE (module doc), ascending; empty when
    ``best_threshold`` is NaN."""
    best = best_threshold(scores, truth)
    if math.isnan(best):
        return np.empty(0)
    s, t = _scored(scores, truth)
    tpr = float((s[t] >= best).mean())
    tnr = float((s[~t] < best).mean())
    se = 0.5 * math.sqrt(tpr * (1 - tpr) / t.sum() + tnr * (1 - tnr) / (~t).sum())
    cuts = np.unique(s)
    floor = float(_ba_at_cuts(s, t, np.asarray([best]))[0]) - se
    return cuts[_ba_at_cuts(s, t, cuts) >= floor]


def stable_threshold(scores: Sequence[float] | np.ndarray, truth: Flags) -> float:
    """The one-standard-error plateau midpoint of the module doc; NaN as ``best_threshold``."""
    if math.isnan(best_threshold(scores, truth)):
        return NAN
    plateau = one_se_plateau(scores, truth)
    return float(plateau[0] + plateau[-1]) / 2 if plateau.size else math.inf

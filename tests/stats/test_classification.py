"""Balanced accuracy, per-class rates and the dev threshold, against hand-computed values."""

from __future__ import annotations

import math

import pytest

from probeguard.stats import (
    Confusion,
    balanced_accuracy,
    best_threshold,
    class_rates,
    one_se_plateau,
    stable_threshold,
    wilson,
)


def test_confusion_and_balanced_accuracy_by_hand():
    truth = [True, True, True, False, False]
    pred = [True, True, False, True, False]
    c = Confusion.of(pred, truth)
    assert (c.tp, c.fp, c.tn, c.fn) == (2, 1, 1, 1)
    # TPR = 2/3, TNR = 1/2 -> BA = 7/12
    assert balanced_accuracy(pred, truth) == pytest.approx(7 / 12)


def test_balanced_accuracy_is_nan_without_both_classes():
    assert math.isnan(balanced_accuracy([True, False], [True, True]))
    assert math.isnan(balanced_accuracy([], []))


def test_balanced_accuracy_ignores_class_imbalance():
    # always "supported" on 9 positives and 1 negative: accuracy 0.9, BA 0.5
    assert balanced_accuracy([True] * 10, [True] * 9 + [False]) == 0.5


def test_class_rates_are_wilson_per_class():
    truth = [True, True, True, False, False]
    pred = [True, True, False, True, False]
    r = class_rates(pred, truth)
    assert r.precision_positive == wilson(2, 3)
    assert r.recall_positive == wilson(2, 3)
    assert r.precision_negative == wilson(1, 2)
    assert r.recall_negative == wilson(1, 2)


def test_best_threshold_by_hand():
    # scores 0.2 0.4 0.6 0.8, labels F F T T: t = 0.6 separates them (BA 1.0)
    assert best_threshold([0.2, 0.4, 0.6, 0.8], [False, False, True, True]) == 0.6
    # overlapping: t=0.8 -> TPR 1/2, TNR 1 (BA .75); t=0.4 -> TPR 1, TNR 1/2 (BA .75);
    # the tie goes to the larger (stricter) threshold
    assert best_threshold([0.2, 0.4, 0.8, 0.4], [False, False, True, True]) == 0.8


def test_best_threshold_leaves_out_nan_and_needs_both_classes():
    assert best_threshold([math.nan, 0.3, 0.9], [False, False, True]) == 0.9
    assert math.isnan(best_threshold([0.3, 0.9], [True, True]))
    assert math.isnan(best_threshold([math.nan, math.nan], [True, False]))


def test_best_threshold_can_be_infinite_when_every_positive_call_hurts():
    # higher scores on the negatives: predicting nothing positive (BA 0.5) beats every cut
    assert best_threshold([0.9, 0.1], [False, True]) == math.inf


def test_stable_threshold_is_the_midpoint_of_the_one_se_plateau():
    pos, neg = [0.4, 0.6, 0.7, 0.8, 0.9], [0.1, 0.2, 0.3, 0.5, 0.65]
    scores, truth = pos + neg, [True] * 5 + [False] * 5
    # BA 0.8 at the cuts 0.4, 0.6 and 0.7; the argmax takes the largest, 0.7
    assert best_threshold(scores, truth) == 0.7
    # at 0.7: TPR 0.6, TNR 1 -> SE = ½·√(0.6·0.4/5) ≈ 0.110; the cuts with BA >= 0.690 are
    # 0.3, 0.4, 0.5, 0.6, 0.65, 0.7 and 0.8 (BA 0.7 or 0.8) -> midpoint (0.3 + 0.8) / 2
    assert stable_threshold(scores, truth) == pytest.approx(0.55)
    assert one_se_plateau(scores, truth).tolist() == [0.3, 0.4, 0.5, 0.6, 0.65, 0.7, 0.8]
    assert one_se_plateau([0.3, 0.9], [True, True]).size == 0  # a class absent


def test_stable_threshold_equals_the_argmax_when_nothing_else_is_close():
    scores, truth = [0.2, 0.4, 0.6, 0.8], [False, False, True, True]
    # perfect separation: SE = 0, the plateau is the one cut 0.6
    assert stable_threshold(scores, truth) == 0.6
    assert math.isnan(stable_threshold([0.3, 0.9], [True, True]))
    assert stable_threshold([math.nan, 0.3, 0.9], [False, False, True]) == 0.9

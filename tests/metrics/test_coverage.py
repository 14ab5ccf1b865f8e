"""Evidence Coverage Score and the silent-failure quadrant."""

from __future__ import annotations

import math

import numpy as np
import pytest

from probeguard.metrics.coverage import (
    evidence_coverage_score,
    paragraph_coverage,
    silent_failure_quadrant,
)

PARA = "Refunds are issued within thirty days of purchase"  # 8 tokens


def test_no_gold_evidence_is_nan():
    assert math.isnan(evidence_coverage_score([], ["any chunk"]))
    assert math.isnan(evidence_coverage_score(["", "  ...  "], ["any chunk"]))  # no tokens
    assert math.isnan(paragraph_coverage("", ["x"]))


def test_no_chunks_covers_nothing():
    assert evidence_coverage_score([PARA], []) == 0.0
    assert paragraph_coverage(PARA, []) == 0.0


def test_exactly_at_threshold_is_covered():
    chunk = "Our policy: refunds are issued within, well, nothing else"  # holds 4 of 8
    assert paragraph_coverage(PARA, [chunk]) == 0.5
    assert evidence_coverage_score([PARA], [chunk]) == 1.0
    assert evidence_coverage_score([PARA], [chunk], threshold=0.51) == 0.0
    three = "refunds are issued"  # 3 of 8
    assert evidence_coverage_score([PARA], [three]) == 0.0


def test_threshold_edge_with_inexact_float():
    para = " ".join(f"w{i}" for i in range(10))
    chunk = "w0 w1 w2"  # 3/10 at θ = 0.3 (0.3·10 ≠ 3 in floats)
    assert evidence_coverage_score([para], [chunk], threshold=0.3) == 1.0


def test_split_paragraph_is_not_covered_by_pooling():
    first = "Refunds are issued"  # 3 of 8
    second = "within thirty days"  # 3 of 8; 6 of 8 together
    assert paragraph_coverage(PARA, [first, second]) == 3 / 8
    assert evidence_coverage_score([PARA], [first, second]) == 0.0
    assert evidence_coverage_score([PARA], [first + " " + second]) == 1.0


def test_token_multiplicity_is_min_of_counts():
    para = "data data data model"  # data×3, model×1
    assert paragraph_coverage(para, ["data model"]) == 2 / 4
    assert paragraph_coverage(para, ["data data data data"]) == 3 / 4


def test_fraction_of_paragraphs():
    paras = [PARA, "The warranty lasts two years", "Shipping is free over fifty euros"]
    chunks = ["refunds are issued within thirty days", "shipping is free"]
    # PARA 6/8 covered; warranty 0/5; shipping 3/6 = 0.5 covered
    assert evidence_coverage_score(paras, chunks) == pytest.approx(2 / 3)
    assert evidence_coverage_score(paras + [""], chunks) == pytest.approx(2 / 3)  # "" not counted
    assert evidence_coverage_score([PARA, PARA], chunks) == 1.0  # as listed


def test_threshold_must_be_a_share():
    with pytest.raises(ValueError):
        evidence_coverage_score([PARA], [PARA], threshold=0.0)


def test_silent_failure_quadrant_numbers():
    nan = float("nan")
    faith = [0.9, 1.0, 0.6, 0.2, 0.5, 0.9, 0.8, nan, 0.7, 0.95]
    ecs = [0.0, 0.25, 0.4, 0.0, 0.0, 0.5, 1.0, 0.0, nan, 0.45]
    # scored: 8 (indices 7, 8 have a NaN); ECS < 0.5: 0, 1, 2, 3, 4, 9 → 6
    # silent (F > 0.5 and ECS < 0.5): 0, 1, 2, 9 → 4 (index 4 has F = 0.5, index 5 ECS = 0.5)
    q = silent_failure_quadrant(faith, ecs)
    assert (q.silent, q.low_coverage, q.scored, q.unscored) == (4, 6, 8, 2)
    assert q.share_of_all.value == 0.5 and q.share_of_all.n == 8
    assert q.share_of_low_coverage.value == pytest.approx(4 / 6)
    assert q.share_of_low_coverage.n == 6 and q.share_of_low_coverage.method == "wilson"
    low, high = q.share_of_all.low, q.share_of_all.high
    assert low == pytest.approx(0.2152, abs=1e-4) and high == pytest.approx(0.7848, abs=1e-4)
    s = q.summary()
    assert s["share_of_all"]["n"] == 8 and s["unscored"] == 2


def test_silent_failure_undefined_is_nan():
    q = silent_failure_quadrant([0.9, float("nan")], [0.9, 0.1])
    assert q.share_of_all.value == 0.0 and q.share_of_all.n == 1
    assert q.share_of_low_coverage.n == 0 and math.isnan(q.share_of_low_coverage.value)
    empty = silent_failure_quadrant(np.array([]), np.array([]))
    assert empty.share_of_all.n == 0 and math.isnan(empty.share_of_all.value)
    with pytest.raises(ValueError):
        silent_failure_quadrant([0.1, 0.2], [0.1])

"""Paired tests: exact McNemar against scipy's binomial test and hand-computed values, Holm
against its definition, the paired bootstrap's determinism and bounds, the minimum detectable
difference against a direct power computation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binom, binomtest

from probeguard.stats import (
    cluster_members,
    holm,
    mcnemar_exact,
    min_significant_discordant,
    minimum_detectable_difference,
    paired_bootstrap_difference,
    paired_cluster_difference,
)
from probeguard.stats.paired import binomial_cdf


def test_mcnemar_hand_computed() -> None:
    # b=6, c=0: 2 * 0.5**6 = 0.03125; b=5, c=0: 0.0625; b=3, c=1: 2*(1+4)/16 = 0.625
    assert mcnemar_exact(6, 0) == pytest.approx(0.03125)
    assert mcnemar_exact(0, 5) == pytest.approx(0.0625)
    assert mcnemar_exact(3, 1) == pytest.approx(0.625)
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(4, 4) == 1.0


@given(st.integers(0, 60), st.integers(0, 60))
def test_mcnemar_matches_scipy_binomtest(b: int, c: int) -> None:
    expected = 1.0 if b + c == 0 else binomtest(b, b + c, 0.5).pvalue
    assert mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-9, abs=1e-300)


@given(st.integers(0, 80), st.integers(1, 80), st.floats(0.0, 1.0))
def test_binomial_cdf_matches_scipy(k: int, n: int, p: float) -> None:
    assert binomial_cdf(k, n, p) == pytest.approx(float(binom.cdf(k, n, p)), abs=1e-9)


def test_holm_hand_computed() -> None:
    # sorted 0.01, 0.02, 0.04 with m = 3: 0.03, max(0.03, 0.04) = 0.04, max(0.04, 0.04) = 0.04
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    adjusted = holm([0.5, math.nan, 0.01])
    assert adjusted[0] == pytest.approx(0.5) and math.isnan(adjusted[1])
    assert adjusted[2] == pytest.approx(0.02)  # m = 2: NaN is not counted
    assert holm([0.6, 0.7]) == [1.0, 1.0]


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=12))
def test_holm_is_monotone_and_at_least_raw(ps: list[float]) -> None:
    adjusted = holm(ps)
    assert all(a >= p - 1e-12 for a, p in zip(adjusted, ps))
    order = np.argsort(ps, kind="stable")
    ranked = [adjusted[i] for i in order]
    assert ranked == sorted(ranked)


def test_paired_bootstrap_difference() -> None:
    base = [False] * 10 + [True] * 10
    cand = [True] * 5 + [False] * 5 + [True] * 10
    est = paired_bootstrap_difference(base, cand, seed=3)
    assert est.value == pytest.approx(0.25) and est.n == 20
    assert est.low <= 0.25 <= est.high and est.low > 0.0
    assert est == paired_bootstrap_difference(base, cand, seed=3)
    same = paired_bootstrap_difference(base, base, seed=3)
    assert (same.value, same.low, same.high) == (0.0, 0.0, 0.0)
    empty = paired_bootstrap_difference([], [], seed=0)
    assert empty.n == 0 and math.isnan(empty.value)
    with pytest.raises(ValueError):
        paired_bootstrap_difference([True], [], seed=0)


def test_paired_cluster_difference_shares_each_draw() -> None:
    values = np.arange(12, dtype=float)
    clusters = [f"c{i // 2}" for i in range(12)]

    def mean(idx: np.ndarray) -> float:
        return float(values[idx].mean())

    def shifted(idx: np.ndarray) -> float:
        return float(values[idx].mean()) + 0.5

    est = paired_cluster_difference(shifted, mean, clusters, rng=np.random.default_rng(0))
    # one draw serves both statistics, so a constant shift has no spread at all
    assert est.n == 12
    assert [est.value, est.low, est.high] == pytest.approx([0.5, 0.5, 0.5])
    apart = paired_cluster_difference(mean, mean, clusters, rng=np.random.default_rng(0))
    assert (apart.low, apart.high) == (0.0, 0.0)
    again = paired_cluster_difference(shifted, mean, clusters, rng=np.random.default_rng(0))
    assert again == est
    none = paired_cluster_difference(mean, mean, [], rng=np.random.default_rng(0))
    assert none.n == 0 and math.isnan(none.value)


def test_cluster_members_groups_by_label() -> None:
    groups = cluster_members(["b", "a", "b", "c"])
    assert [g.tolist() for g in groups] == [[1], [0, 2], [3]]
    assert cluster_members([]) == []


def test_min_significant_discordant() -> None:
    assert min_significant_discordant(0.05) == 6  # 2/64 < 0.05 <= 2/32
    assert min_significant_discordant(0.01) == 8  # 2/256 < 0.01 <= 2/128


@pytest.mark.parametrize("n", [6, 12, 32, 100, 400])
def test_minimum_detectable_difference_has_the_power(n: int) -> None:
    mdd = minimum_detectable_difference(n, alpha=0.05, power=0.8)
    need = min_significant_discordant(0.05)
    assert float(binom.sf(need - 1, n, mdd)) >= 0.8 - 1e-9
    assert float(binom.sf(need - 1, n, mdd - 1e-6)) < 0.8


def test_minimum_detectable_difference_shrinks_with_n() -> None:
    values = [minimum_detectable_difference(n) for n in (12, 32, 100, 1000)]
    assert values == sorted(values, reverse=True)
    assert 0.5 < values[0] < 0.7  # 12 pairs: only a very large regression is detectable
    assert minimum_detectable_difference(5) == 1.0  # 5 pairs can never reach 6
    assert math.isnan(minimum_detectable_difference(0))

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from probeguard.stats import bootstrap_mean, proportion, wilson


def test_wilson_hand_computed():
    # p̂ = 0.3, n = 10, z = 1.96: centre = (0.3 + 0.19208)/1.38415 = 0.35551,
    # half = 1.96*sqrt(0.021 + 0.0096040)/1.38415 = 0.24772 → [0.1078, 0.6032]
    est = wilson(3, 10)
    assert est.value == pytest.approx(0.3)
    assert est.low == pytest.approx(0.10779, abs=1e-4)
    assert est.high == pytest.approx(0.60322, abs=1e-4)
    assert est.n == 10 and est.method == "wilson"


def test_wilson_extremes_stay_in_unit_interval():
    zero, full = wilson(0, 20), wilson(20, 20)
    assert zero.low == 0.0 and 0 < zero.high < 0.2
    assert full.high == 1.0 and 0.8 < full.low < 1


def test_empty_is_undefined_not_zero():
    est = wilson(0, 0)
    assert math.isnan(est.value) and not est.defined
    assert est.format() == "n/a (n=0)"
    assert not bootstrap_mean([float("nan")], seed=0).defined


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 500), st.data())
def test_wilson_contains_point_estimate(n, data):
    k = data.draw(st.integers(0, n))
    est = wilson(k, n)
    assert 0.0 <= est.low <= est.value <= est.high <= 1.0


def test_wilson_rejects_bad_counts():
    with pytest.raises(ValueError):
        wilson(5, 3)


def test_proportion_counts_true():
    assert proportion([True, False, True, True]).value == 0.75


def test_bootstrap_is_seeded_and_brackets_mean():
    values = [0.0, 1.0, 0.5, 1.0, 0.25, 0.75, 1.0, 0.0]
    a, b = bootstrap_mean(values, seed=7), bootstrap_mean(values, seed=7)
    assert a == b
    assert a.low <= a.value <= a.high
    assert a.value == pytest.approx(sum(values) / len(values))

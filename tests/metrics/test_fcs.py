import math

import pytest

from probeguard.metrics.fcs import failure_coverage_score
from probeguard.probes import load_probes

WEIGHTS = {name: cls.overlap_weight for name, cls in load_probes().items()}


def test_fcs_hand_computed_with_default_weights():
    rates = {
        "chunk_fracture": 0.2,
        "retrieval_gap": 0.1,
        "corpus_contradiction": 0.5,
        "prompt_hijack": 0.0,
    }
    r = failure_coverage_score(rates, WEIGHTS)
    # unique: 0.2·0.85 = 0.17, 0.1·0.85 = 0.085, 0.5·0.6 = 0.30, 0
    assert r.unique_rates == pytest.approx(
        {
            "chunk_fracture": 0.17,
            "retrieval_gap": 0.085,
            "corpus_contradiction": 0.30,
            "prompt_hijack": 0.0,
        }
    )
    # unique rate = 1 − 0.83·0.915·0.70 = 1 − 0.531615 = 0.468385
    assert r.adversarial_unique_rate == pytest.approx(0.468385)
    # union = 1 − 0.8·0.9·0.5·1 = 0.64
    assert r.adversarial_union_rate == pytest.approx(0.64)
    assert r.fcs == pytest.approx(0.468385 / 0.64)  # 0.731852


def test_fcs_single_probe_equals_one_minus_its_weight():
    r = failure_coverage_score({"prompt_hijack": 0.3}, WEIGHTS)
    assert r.fcs == pytest.approx(0.6)


def test_fcs_custom_weights_override_defaults():
    r = failure_coverage_score({"chunk_fracture": 0.5}, {"chunk_fracture": 0.0})
    assert r.fcs == pytest.approx(1.0)
    r = failure_coverage_score({"chunk_fracture": 0.5}, {"chunk_fracture": 1.0})
    assert r.fcs == 0.0 and r.adversarial_union_rate == 0.5


def test_fcs_is_nan_when_nothing_failed():
    r = failure_coverage_score({"chunk_fracture": 0.0, "prompt_hijack": 0.0})
    assert math.isnan(r.fcs) and r.adversarial_union_rate == 0.0
    assert "undefined" in r.interpretation()


def test_undefined_probe_rates_are_left_out():
    r = failure_coverage_score({"chunk_fracture": float("nan"), "prompt_hijack": 0.5}, WEIGHTS)
    assert r.fcs == pytest.approx(0.6) and "chunk_fracture" not in r.unique_rates


def test_interpretation_and_recommendation_name_the_worst_probe():
    rates = {"chunk_fracture": 0.1, "corpus_contradiction": 0.6}
    r = failure_coverage_score(rates, WEIGHTS)
    assert "invisible to standard evaluation" in r.interpretation()
    assert r.recommendation(rates).startswith("Start with corpus contradiction")


def test_rates_are_validated():
    with pytest.raises(ValueError):
        failure_coverage_score({"chunk_fracture": 1.5})

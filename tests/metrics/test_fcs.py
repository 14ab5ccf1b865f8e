import math

import pytest

from probeguard.metrics.fcs import (
    FCSSummary,
    QuestionOutcome,
    empirical_fcs,
    failure_coverage_score,
)
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


# -- empirical FCS ---------------------------------------------------------------------------
def _outcomes(adversarial_only: int, standard_only: int, both: int, neither: int) -> list:
    return (
        [QuestionOutcome(standard_failed=False, adversarial_failed=True)] * adversarial_only
        + [QuestionOutcome(standard_failed=True, adversarial_failed=False)] * standard_only
        + [QuestionOutcome(standard_failed=True, adversarial_failed=True)] * both
        + [QuestionOutcome(standard_failed=False, adversarial_failed=False)] * neither
    )


def test_empirical_fcs_hand_computed():
    # 3 probe-only, 1 standard-only, 2 both, 4 passing everything: 3 / (3 + 1 + 2) = 0.5
    r = empirical_fcs(_outcomes(3, 1, 2, 4), seed=0)
    assert r.value.value == pytest.approx(0.5)
    assert r.value.n == 6 and r.value.method == "bootstrap"
    assert 0.0 <= r.value.low <= 0.5 <= r.value.high <= 1.0 and r.value.low < r.value.high
    assert (r.questions, r.adversarial_only, r.standard_only, r.both) == (10, 3, 1, 2)
    assert r.interpretation.startswith("3 of the 6 golden questions")


def test_empirical_fcs_does_not_saturate_when_one_probe_fails_everywhere():
    # One probe fails on every question (the seed formula's union rate is 1, FCS near 1);
    # half the questions also fail standard evaluation: the empirical figure says 0.5.
    seed_fcs = failure_coverage_score({"hijack": 1.0, "fracture": 0.1}, {"hijack": 0.05})
    assert seed_fcs.adversarial_union_rate == 1.0 and seed_fcs.fcs > 0.9
    r = empirical_fcs(_outcomes(5, 0, 5, 0), seed=0)
    assert r.value.value == pytest.approx(0.5)


def test_empirical_fcs_is_nan_when_no_question_fails():
    r = empirical_fcs(_outcomes(0, 0, 0, 7), seed=0, unscored_questions=2)
    assert math.isnan(r.value.value) and r.value.n == 0
    assert r.questions == 7 and r.unscored_questions == 2
    assert "undefined" in r.interpretation
    assert math.isnan(empirical_fcs([], seed=0).value.value)


def test_empirical_fcs_interval_is_deterministic_in_the_seed():
    outcomes = _outcomes(4, 3, 5, 2)
    a, b = empirical_fcs(outcomes, seed=3), empirical_fcs(outcomes, seed=3)
    assert a == b and a.model_dump_json() == b.model_dump_json()
    assert empirical_fcs(outcomes, seed=4).value.value == a.value.value


def test_empirical_fcs_round_trips_through_the_summary_model():
    summary = FCSSummary(
        value=0.9,
        adversarial_failure_rate=1.0,
        adversarial_unique_rate=0.9,
        overlap_weights={},
        interpretation="",
        recommendation="",
        empirical=empirical_fcs(_outcomes(0, 0, 0, 3), seed=0),
    )
    back = FCSSummary.model_validate_json(summary.model_dump_json())
    assert back.empirical is not None and math.isnan(back.empirical.value.value)
    assert back.empirical.questions == 3

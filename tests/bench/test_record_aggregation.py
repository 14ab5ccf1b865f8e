"""benchmarks/record_aggregation.py: the soft minimums sit between the mean and the min, the
weakest-verifiable score ignores a question, and the min refit ranks a record with one weak
claim below one with none."""

from __future__ import annotations

import numpy as np
from benchmarks import record_aggregation as ra

from probeguard.detectors.offline_judge import OfflineJudge
from probeguard.engine.bench.judges_data import LabelledClaim

GRADES = np.array([0.9, 0.8, 0.2])


def test_power_means_fall_from_the_mean_towards_the_min() -> None:
    none = np.zeros(3, bool)
    values = [ra.AGGREGATIONS[n](GRADES, ~none, none) for n in ("power_-1", "power_-2", "power_-4")]
    assert float(np.mean(GRADES)) > values[0] > values[1] > values[2] > float(np.min(GRADES))
    assert ra.power_mean(-2.0)(np.array([0.9, 0.0])) == 0.0


def test_weakest_verifiable_skips_unverifiable_claims_and_falls_back_to_the_mean() -> None:
    agg = ra.AGGREGATIONS["min_verifiable"]
    none = np.zeros(3, bool)
    assert agg(GRADES, np.array([True, True, False]), none) == 0.8
    assert agg(GRADES, none, none) == float(np.mean(GRADES))


def test_graded_claims_mark_a_question_unverifiable() -> None:
    record = LabelledClaim(
        "r",
        "begin",
        "Elvis Presley was born in Tupelo. Have you heard Hound Dog?",
        ("Elvis Presley was born in Tupelo, Mississippi.",),
        True,
        "r",
    )
    grades, verifiable, filler = ra.graded_claims(OfflineJudge(), record)
    assert len(grades) == 2 and verifiable.tolist() == [True, False]
    assert filler.tolist() == [False, False]


def test_mean_no_fillers_skips_fillers_and_is_unscored_without_a_claim() -> None:
    record = LabelledClaim(
        "f",
        "begin",
        "Sure! Elvis Presley was born in Tupelo. Thanks!",
        ("Elvis Presley was born in Tupelo, Mississippi.",),
        True,
        "f",
    )
    grades, verifiable, filler = ra.graded_claims(OfflineJudge(), record)
    assert filler.tolist() == [True, False, True]
    agg = ra.AGGREGATIONS["mean_no_fillers"]
    assert agg(grades, verifiable, filler) == grades[1] > float(np.mean(grades))
    assert np.isnan(agg(grades, verifiable, np.ones(3, bool)))


def test_yes_and_no_are_not_fillers() -> None:
    assert ra.is_filler("Great question!") and ra.is_filler("Oh wow, thank you so much!")
    assert not any(ra.is_filler(t) for t in ("Yes.", "No.", "Well, it opened in 1901."))


def test_min_refit_ranks_one_weak_claim_below_none() -> None:
    strong, weak = np.array([[1.0, 1.0]]), np.array([[0.0, 0.0]])
    records = [
        ("wice", True, [strong, strong], 1.0),
        ("wice", False, [strong, weak], 0.5),
        ("wice", True, [strong], 1.0),
        ("wice", False, [weak], 0.0),
    ]
    beta = ra.fit_weakest(records)
    scores = ra.min_scores(records, beta)
    assert scores[1] < scores[0] and scores[3] < scores[2]


def test_whole_grade_judges_the_response_as_one_claim() -> None:
    record = LabelledClaim(
        "w", "wice", "The museum opened in 1901.", ("The museum opened in 1901.",), True, "w"
    )
    unrelated = LabelledClaim(
        "u", "wice", "Penguins migrate south.", ("The museum opened in 1901.",), False, "u"
    )
    judge = OfflineJudge()
    assert ra.whole_grade(judge, record) > 0.5 > ra.whole_grade(judge, unrelated)

"""metrics.graded: each scored claim's grade (best cell, label fallback, unscored skipped) and
the mean support_score reads."""

from __future__ import annotations

import math

from probeguard.core.pipeline import Context
from probeguard.detectors.judges import Judgment, Verdict
from probeguard.detectors.offline_judge import OfflineJudge
from probeguard.metrics.graded import claim_grades, support_score

CHUNKS = (Context("a", "t"), Context("b", "u"))


def _graded(label: str, support: float, chunk: str) -> Verdict:
    return Verdict(label, 1.0, chunk, support=support)


def test_claim_grades_take_the_best_cell_in_claim_order_and_skip_unscored() -> None:
    cells = (
        (_graded("unsupported", 0.2, "a"), _graded("supported", 0.9, "b")),
        (Verdict("unscored", chunk_id="a"), Verdict("unscored", chunk_id="b")),
        (_graded("unsupported", 0.1, "a"), _graded("unsupported", 0.3, "b")),
    )
    j = Judgment(("x", "y", "z"), CHUNKS, cells, "offline")
    assert claim_grades(j) == [0.9, 0.3]
    assert math.isclose(support_score(j), 0.6)


def test_claim_grades_fall_back_to_the_label_without_a_grade() -> None:
    cells = ((Verdict("supported", 1.0, "a"),), (Verdict("contradicted", 1.0, "a"),))
    j = Judgment(("x", "y"), CHUNKS[:1], cells, "llm")
    assert claim_grades(j) == [1.0, 0.0]


def test_one_unsupported_claim_among_supported_ones_is_the_weakest_grade() -> None:
    chunk = Context("c", "The museum opened in 1901 in the old customs house by the river.")
    supported = ["The museum opened in 1901.", "The museum is in the old customs house."]
    one_off = [*supported, "Penguins migrate south every winter."]
    judge = OfflineJudge()
    good, mixed = (
        claim_grades(judge.judge(supported, [chunk])),
        claim_grades(judge.judge(one_off, [chunk])),
    )
    assert mixed[:2] == good and min(mixed) == mixed[2] < min(good)
    assert support_score(judge.judge(one_off, [chunk])) < support_score(
        judge.judge(supported, [chunk])
    )


def test_no_scored_claim_is_nan() -> None:
    j = Judgment(("x",), CHUNKS[:1], ((Verdict("unscored", chunk_id="a"),),), "offline")
    assert claim_grades(j) == [] and math.isnan(support_score(j))

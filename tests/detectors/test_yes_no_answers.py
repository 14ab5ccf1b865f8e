"""Yes/no answers in faithfulness: "Yes, ..." / "No, ..." answering a yes/no question assert
its proposition or its negation, so the offline judge scores them like any claim (a rule that
drops content-free clauses, such as interjections or thanks, must leave them alone)."""

from __future__ import annotations

from probeguard.core.pipeline import Context
from probeguard.detectors.config import JudgeConfig
from probeguard.detectors.factory import build_judges
from probeguard.metrics.standard import score_standard

JUDGES = build_judges(JudgeConfig())
CONTEXTS = [Context("w", "Kestrel devices come with a warranty. The warranty lasts two years.")]
QUESTION = "Does the warranty last two years?"


def _faithfulness(answer: str) -> float:
    return score_standard(QUESTION, answer, CONTEXTS, JUDGES).metrics["faithfulness"].value


def test_a_supported_yes_answer_is_faithful():
    assert _faithfulness("Yes, the warranty lasts two years.") == 1.0


def test_a_contradicted_no_answer_is_unfaithful():
    assert _faithfulness("No, the warranty lasts five years.") == 0.0

"""Next-token answer probabilities (``models.generators.llama_cpp_logits``): the log-softmax,
the spellings that count for a word and their summed mass; and — marked slow, skipped without
cyllama or the weights — the real SmolLM2-135M scoring yes/no, and the SmolLM2 judge in the
yes/no style end to end."""

from __future__ import annotations

import math

import numpy as np
import pytest

from probeguard.core.pipeline import Context
from probeguard.models.generators.llama_cpp_logits import (
    answer_mass,
    answer_variants,
    log_softmax,
)
from probeguard.models.prompts import YESNO_JUDGE
from testkit import REFUND, needs_smollm2


def test_log_softmax_is_stable_and_normalised():
    lp = log_softmax(np.array([1000.0, 1000.0, 0.0]))
    assert np.exp(lp).sum() == pytest.approx(1.0)
    assert lp[0] == pytest.approx(math.log(0.5)) and np.isfinite(lp).all()


def test_answer_variants():
    assert answer_variants("yes") == ("yes", " yes", "Yes", " Yes", "YES", " YES")


def test_answer_mass_sums_distinct_tokens():
    lp = np.log(np.array([0.5, 0.2, 0.1, 0.2]))
    mass = answer_mass(lp, {"yes": (1, 2, 2), "no": (3,), "maybe": ()})
    assert mass["yes"] == pytest.approx(0.3)  # token 2 counted once
    assert mass["no"] == pytest.approx(0.2) and mass["maybe"] == 0.0


@needs_smollm2
def test_smollm2_answer_probabilities_are_real_and_deterministic():
    from probeguard.models.generators.llama_cpp import LlamaCppGenerator

    gen = LlamaCppGenerator(threads=1, max_tokens=3)
    ctx = [Context("c", "The Rhine flows into the North Sea.")]
    first = gen.answer_probabilities(
        "The Rhine flows into the Black Sea.", ctx, YESNO_JUDGE, ["yes", "no"]
    )
    again = gen.answer_probabilities(
        "The Rhine flows into the Black Sea.", ctx, YESNO_JUDGE, ["yes", "no"]
    )
    p = first.probabilities
    assert 0.0 < p["yes"] < 1.0 and 0.0 < p["no"] < 1.0 and p["yes"] + p["no"] <= 1.0
    assert first == again  # greedy, one forward pass: same prompt, same numbers
    assert first.metadata["contexts_used"] == 1 and first.metadata["prompt_tokens"] > 10


@needs_smollm2
def test_smollm2_judge_scores_by_probability_not_prose():
    # Regression (issue 12): in the JSON style every SmolLM2 record was unscored (prose).
    from probeguard.engine.bench.judges_models import SmolJudge
    from probeguard.models.generators.llama_cpp import LlamaCppGenerator

    judge = SmolJudge(LlamaCppGenerator(threads=1, max_tokens=3))
    j = judge.judge(["Customers may return items within 30 days."], [REFUND])
    v = j.verdicts[0][0]
    assert v.label in ("supported", "unsupported") and 0.0 <= v.support <= 1.0
    assert "P(yes)/(P(yes)+P(no))" in v.reason
    assert judge.config()["style"] == "yesno"

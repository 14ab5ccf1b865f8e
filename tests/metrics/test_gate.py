"""The min_score gate analysis: AUROC against a brute-force count, gate rates, Youden's best
gate, saturation, and the top score of an output."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from probeguard.core.pipeline import PipelineOutput, RetrievedChunk
from probeguard.metrics.gate import (
    SATURATION_SPREAD,
    auroc,
    best_gate,
    gate_analysis,
    gate_rates,
    top_score,
)


def brute_auroc(pos: list[float], neg: list[float]) -> float:
    wins = 0.0
    for p in pos:
        for n in neg:
            wins += 1.0 if p > n else 0.5 if p == n else 0.0
    return wins / (len(pos) * len(neg))


scores = st.lists(
    st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.5, 0.75, 1.0, -math.inf]), min_size=1, max_size=12
)


@settings(max_examples=200, deadline=None)
@given(scores, scores)
def test_auroc_matches_pairwise_count(pos: list[float], neg: list[float]) -> None:
    assert math.isclose(auroc(pos, neg), brute_auroc(pos, neg))


def test_auroc_extremes_and_undefined() -> None:
    assert auroc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert auroc([0.1], [0.9]) == 0.0
    assert auroc([0.5, 0.5], [0.5]) == 0.5
    assert math.isnan(auroc([], [0.3]))
    assert math.isnan(auroc([0.3], []))


def test_gate_rates_count_scores_below_threshold() -> None:
    rates = gate_rates([0.2, 0.5, 0.9, -math.inf], [0.1, 0.6], threshold=0.5)
    assert rates["false_refusal"]["value"] == 0.5 and rates["false_refusal"]["n"] == 4
    assert rates["abstention"]["value"] == 0.5 and rates["abstention"]["n"] == 2
    empty = gate_rates([0.4], [], threshold=0.5)["abstention"]
    assert empty["n"] == 0 and math.isnan(empty["value"])


def test_best_gate_separates_when_scores_do() -> None:
    best = best_gate([0.7, 0.8, 0.9], [0.1, 0.2, 0.3])
    assert best is not None
    assert 0.3 < best["min_score"] <= 0.7
    assert best["youden_j"] == 1.0
    assert best["false_refusal"]["value"] == 0.0 and best["abstention"]["value"] == 1.0
    assert best_gate([], [0.1]) is None


def test_best_gate_maximises_youden_over_all_thresholds() -> None:
    rng = np.random.default_rng(3)
    a = rng.normal(0.6, 0.15, 40).tolist()
    u = rng.normal(0.45, 0.15, 15).tolist()
    best = best_gate(a, u)
    assert best is not None
    grid = np.linspace(-0.5, 1.5, 2001)
    brute = max(float((np.asarray(u) < t).mean() - (np.asarray(a) < t).mean()) for t in grid)
    assert best["youden_j"] >= brute - 1e-9


def test_rank_fused_scores_saturate_and_cosine_scores_do_not() -> None:
    rrf = [2 / 61, 1 / 61 + 1 / 62, 2 / 61, 1 / 61 + 1 / 63, 1 / 62 + 1 / 61]
    cosine = [0.21, 0.35, 0.48, 0.62, 0.81]
    assert gate_analysis(rrf, rrf[:2])["saturated"]
    analysis = gate_analysis(cosine, [0.2, 0.3])
    assert not analysis["saturated"] and analysis["spread"] > SATURATION_SPREAD
    assert analysis["configured_gate"] is None
    gated = gate_analysis(cosine, [0.2, 0.3], configured=0.4)["configured_gate"]
    assert gated["false_refusal"]["value"] == 0.4 and gated["abstention"]["value"] == 1.0


def test_gate_analysis_describes_empty_retrievals() -> None:
    analysis = gate_analysis([-math.inf, 0.5, 0.7], [-math.inf])
    assert analysis["answerable_top_score"]["empty"] == 1
    assert analysis["unanswerable_top_score"] == {"n": 1, "empty": 1}


def test_top_score_of_outputs() -> None:
    chunks = [
        RetrievedChunk(chunk_id=f"d#{i}", doc_id="d", text="t", rank=i + 1, score=s)
        for i, s in enumerate([0.4, 0.9, 0.1])
    ]
    assert top_score(PipelineOutput(answer="a", retrieved=chunks)) == 0.9
    assert top_score(PipelineOutput(answer="a")) == -math.inf

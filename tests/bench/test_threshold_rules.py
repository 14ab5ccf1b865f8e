"""benchmarks/threshold_rules.py: reads dev scores only and cross-validates each rule on the
same seeded splits."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from benchmarks import threshold_rules


def _bench(path: Path) -> Path:
    scores = [
        {
            "dataset": "d",
            "judge": "j",
            "split": "dev",
            "id": f"a{i}",
            "label": i % 2 == 0,
            "score": 0.9 if i % 2 == 0 else 0.1,
        }
        for i in range(20)
    ]
    scores.append(
        {"dataset": "d", "judge": "j", "split": "test", "id": "t", "label": True, "score": 0.0}
    )
    scores.append(
        {"dataset": "d", "judge": "j", "split": "dev", "id": "n", "label": True, "score": math.nan}
    )
    path.write_text(json.dumps({"scores": scores}), encoding="utf-8")
    return path


def test_dev_scores_leave_out_test_and_unscored_records(tmp_path: Path) -> None:
    scores, labels = threshold_rules.dev_scores(_bench(tmp_path / "bench.json"))[("d", "j")]
    assert len(scores) == len(labels) == 20
    assert 0.0 not in scores.tolist()


def test_every_rule_separates_separable_scores_on_held_out_halves() -> None:
    scores = np.asarray([0.9, 0.1] * 10)
    labels = scores > 0.5
    rng = np.random.default_rng(0)
    for rule in (
        threshold_rules.best_threshold,
        threshold_rules.stable_threshold,
        threshold_rules.plateau_median,
    ):
        assert threshold_rules.held_out(scores, labels, rule, rng, repeats=3) == 1.0
    bagged = threshold_rules.bagged(np.random.default_rng(1))
    assert threshold_rules.held_out(scores, labels, bagged, rng, repeats=3) == pytest.approx(1.0)


def test_main_prints_a_row_per_scorer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    threshold_rules.main([str(_bench(tmp_path / "bench.json")), "--repeats", "2"])
    out = capsys.readouterr().out
    assert "d j (dev n=20)" in out and "mean over rows" in out


def test_plateau_median_is_the_median_cut_of_the_one_se_plateau() -> None:
    pos, neg = [0.4, 0.6, 0.7, 0.8, 0.9], [0.1, 0.2, 0.3, 0.5, 0.65]
    scores, labels = np.asarray(pos + neg), np.asarray([True] * 5 + [False] * 5)
    # plateau 0.3, 0.4, 0.5, 0.6, 0.65, 0.7, 0.8 (tests/stats): median 0.6, midpoint 0.55
    assert threshold_rules.plateau_median(scores, labels) == 0.6
    assert math.isnan(threshold_rules.plateau_median(np.asarray([0.3]), np.asarray([True])))

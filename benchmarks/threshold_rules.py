"""Which dev-threshold rule transfers best, judged on dev splits alone: the evidence behind
``probeguard bench judges``'s choice of ``stats.stable_threshold``.

    python -m benchmarks.threshold_rules BENCH_JSON [--repeats 30] [--seed 1]

Reads the **dev** scores of a ``bench-judges`` result (``probeguard bench judges --out DIR``
writes ``DIR/bench.json``; no test score is read) and, per dataset and judge (the baseline
included), runs repeated two-fold cross-validation: ``repeats`` seeded permutations of the dev
records, each cut in halves A and B; a rule picks t on A and is scored by the balanced
accuracy of "score ≥ t" on B, and the other way round. Printed: each rule's mean held-out BA
per row and over all rows. Rules:

- ``argmax``: ``stats.best_threshold`` (maximum dev BA; ties to the larger t);
- ``one_se``: ``stats.stable_threshold`` (midpoint of the cuts within one standard error of
  the best dev BA; Breiman et al. 1984 §3.4.3);
- ``bagged``: the median of ``best_threshold`` over ``BAGS`` bootstrap resamples of the half
  (bagging the argmax; Breiman 1996, "Bagging predictors");
- ``plateau_median``: the median of the one-SE plateau's cuts (``stats.one_se_plateau``)
  instead of the midpoint of its range: where the plateau's cuts are dense rather than its
  centre.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from probeguard.stats import (
    balanced_accuracy,
    best_threshold,
    one_se_plateau,
    stable_threshold,
)

BAGS = 50
Rule = Callable[[np.ndarray, np.ndarray], float]


def bagged(rng: np.random.Generator) -> Rule:
    """The ``bagged`` rule of the module doc, drawing from ``rng``."""

    def rule(scores: np.ndarray, labels: np.ndarray) -> float:
        picks = []
        for _ in range(BAGS):
            idx = rng.integers(0, len(scores), len(scores))
            t = best_threshold(scores[idx], labels[idx])
            if math.isfinite(t):
                picks.append(t)
        return float(np.median(picks)) if picks else math.nan

    return rule


def plateau_median(scores: np.ndarray, labels: np.ndarray) -> float:
    """The ``plateau_median`` rule of the module doc; NaN and +∞ as ``stable_threshold``."""
    if math.isnan(best_threshold(scores, labels)):
        return math.nan
    plateau = one_se_plateau(scores, labels)
    return float(np.median(plateau)) if plateau.size else math.inf


def held_out(
    scores: np.ndarray, labels: np.ndarray, rule: Rule, rng: np.random.Generator, repeats: int
) -> float:
    """Mean held-out BA of ``rule`` over ``repeats`` two-fold splits (module doc)."""
    out = []
    for _ in range(repeats):
        order = rng.permutation(len(scores))
        half = len(order) // 2
        for fit, score in ((order[:half], order[half:]), (order[half:], order[:half])):
            t = rule(scores[fit], labels[fit])
            if not math.isnan(t):
                out.append(balanced_accuracy(scores[score] >= t, labels[score]))
    return float(np.nanmean(out)) if out else math.nan


def dev_scores(path: Path) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]:
    """(dataset, judge) -> the defined dev scores and their labels."""
    rows: dict[tuple[str, str], list[tuple[float, bool]]] = {}
    for s in json.loads(path.read_text("utf-8"))["scores"]:
        if s["split"] == "dev" and s["score"] is not None and not math.isnan(s["score"]):
            rows.setdefault((s["dataset"], s["judge"]), []).append((s["score"], s["label"]))
    return {
        key: (np.asarray([v for v, _ in r], float), np.asarray([y for _, y in r], bool))
        for key, r in rows.items()
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench_json", type=Path)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    totals: dict[str, list[float]] = {}
    for (dataset, judge), (scores, labels) in sorted(dev_scores(args.bench_json).items()):
        rules: dict[str, Rule] = {
            "argmax": best_threshold,
            "one_se": stable_threshold,
            "bagged": bagged(np.random.default_rng([args.seed, 1])),
            "plateau_median": plateau_median,
        }
        row = {}
        for name, rule in rules.items():
            rng = np.random.default_rng(args.seed)  # the same splits for every rule
            row[name] = round(held_out(scores, labels, rule, rng, args.repeats), 4)
            totals.setdefault(name, []).append(row[name])
        print(f"{dataset} {judge} (dev n={len(scores)}): {json.dumps(row)}", flush=True)
    print(
        "mean over rows:", json.dumps({k: round(float(np.mean(v)), 4) for k, v in totals.items()})
    )


if __name__ == "__main__":
    main()

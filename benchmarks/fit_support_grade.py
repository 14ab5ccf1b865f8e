"""Fit the offline judge's graded support (``probeguard.detectors.grading``) on dev splits and
write ``src/probeguard/detectors/data/support_grade.json`` with its provenance.

    python -m benchmarks.fit_support_grade [--data DIR] [--out FILE] [--date YYYY-MM-DD]

**Data (dev only; no test record is read).** WiCE ``claim_dev``, BEGIN's WoW, CMU-DoG and
TopicalChat dev files (``begin_dev_{wow,cmu,tc}.tsv``), and the dev half of HaluEval QA as
``probeguard bench judges`` splits it (seed 0). Each record's claim goes through the same
path as the bench (``claims.factual(claims.decompose(claim))``, ``judges.judge_claims`` with
its question) with ``OfflineJudge(graded=False)``, which leaves each cell its rule grade;
``grading.cell_features`` gives each scored cell (r, o, x, n, v, u, p).

**Model.** A record's score is the bench's ``support_score``: the mean over its scored claims
of the max over chunks of σ(β·f(cell)). Each claim gets its record's label. The max makes
the fit a multiple-instance one; it alternates (``ROUNDS`` times): pick each claim's cell
(first by highest rule grade, then by highest β·f), then fit β by Newton's method (IRLS) on
the logistic log-loss with an L2 penalty ``PENALTY``·|β without intercept|² (Hastie,
Tibshirani & Friedman 2009, §4.4), each dataset family (WiCE, BEGIN, HaluEval) carrying a
third of the weight, split equally among its files and then among its records and their
claims. Deterministic: no randomness beyond the bench's seeded HaluEval split.

**Printed.** Dev AUROC per dataset in-sample, leave-one-family-out (β fitted without the
family, scored on it) and leave-one-file-out (β fitted without that dataset's file only: for
BEGIN, the other two BEGIN sources stay in, so a feature that only BEGIN-like responses carry,
such as ``u``, is still learnt and then tried on an unseen source), beside the token-overlap
baseline's; test figures come from ``probeguard bench judges``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from probeguard.core.pipeline import Context
from probeguard.detectors.claims import decompose, factual
from probeguard.detectors.grading import FEATURES, MODEL_FILE, cell_features, claim_context
from probeguard.detectors.judges import judge_claims
from probeguard.detectors.offline_judge import OfflineJudge
from probeguard.engine.bench.judges_data import LabelledClaim, load_begin, load_judge_set
from probeguard.engine.bench.judges_models import token_overlap
from probeguard.metrics.gate import auroc

ROUNDS = 4
PENALTY = 1e-3
NEWTON_STEPS = 30
SEED = 0
FAMILIES = {
    "wice": "wice",
    "begin-wow": "begin",
    "begin-cmu": "begin",
    "begin-tc": "begin",
    "halueval": "halueval",
}
OUT = Path(__file__).resolve().parents[1] / "src/probeguard/detectors/data" / MODEL_FILE
Record = tuple[str, bool, list[np.ndarray], float]
"""(dataset, label, one feature matrix per scored claim: a row per scored cell, baseline)."""


def dev_sets(data: Path) -> dict[str, list[LabelledClaim]]:
    """The dev records of the module doc, by dataset."""

    def split(name: str) -> list[LabelledClaim]:
        rng = np.random.default_rng([SEED, zlib.crc32(name.encode())])
        return list(load_judge_set(data, name, rng).dev)

    return {
        "wice": split("wice"),
        "begin-wow": split("begin"),
        "begin-cmu": load_begin(data / "begin" / "begin_dev_cmu.tsv", "dev-cmu"),
        "begin-tc": load_begin(data / "begin" / "begin_dev_tc.tsv", "dev-tc"),
        "halueval": split("halueval"),
    }


def features(judge: OfflineJudge, record: LabelledClaim) -> list[np.ndarray]:
    """One matrix of cell features per scored claim of ``record`` (module doc)."""
    contexts = [Context(f"{record.id}#{k + 1}", t) for k, t in enumerate(record.contexts)]
    facts = [c.text for c in factual(decompose(record.claim))]
    if not facts:
        return []
    judgment = judge_claims(judge, facts, contexts, record.question)
    out = []
    for claim, row, label in zip(judgment.claims, judgment.verdicts, judgment.claim_labels()):
        if label == "unscored":
            continue
        info = claim_context(claim, list(record.contexts))
        cells = [f for f in (cell_features(v, info) for v in row) if f is not None]
        if cells:
            out.append(np.asarray(cells, dtype=float))
    return out


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def newton(x: np.ndarray, y: np.ndarray, w: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """β minimising Σ w·logloss + PENALTY·|β[1:]|² from ``beta`` (column 0: intercept)."""
    ridge = PENALTY * np.diag(np.r_[0.0, np.ones(x.shape[1] - 1)])
    for _ in range(NEWTON_STEPS):
        p = sigmoid(x @ beta)
        grad = x.T @ (w * (p - y)) + ridge @ beta
        hess = (x * (w * p * (1 - p))[:, None]).T @ x + ridge
        beta = beta - np.linalg.solve(hess, grad)
    return beta


def weights(records: Sequence[Record]) -> list[float]:
    """Each record's weight: family thirds, split among files, then among records."""
    files: dict[str, set[str]] = {}
    count: dict[str, int] = {}
    for ds, *_ in records:
        files.setdefault(FAMILIES[ds], set()).add(ds)
        count[ds] = count.get(ds, 0) + 1
    return [1.0 / len(files) / len(files[FAMILIES[ds]]) / count[ds] for ds, *_ in records]


def fit(records: Sequence[Record]) -> np.ndarray:
    """β (intercept first) by the alternating fit of the module doc, over as many columns as
    the records' cells have (``FEATURES`` here; ``grade_features`` adds some)."""
    beta = np.zeros(records[0][2][0].shape[1] + 1)
    per = weights(records)
    for round_ in range(ROUNDS):
        rows, ys, ws = [], [], []
        for (_, label, claims, _), weight in zip(records, per):
            for cells in claims:
                x = np.hstack([np.ones((len(cells), 1)), cells])
                pick = int(np.argmax(cells[:, 0] if round_ == 0 else x @ beta))
                rows.append(x[pick])
                ys.append(float(label))
                ws.append(weight / len(claims))
        w = np.asarray(ws)
        beta = newton(np.asarray(rows), np.asarray(ys), w / w.sum(), beta)
    return beta


def scores(
    records: Sequence[Record], beta: np.ndarray, aggregate: Callable[..., Any] = np.mean
) -> list[float]:
    """``support_score`` of each record under β (module doc): ``aggregate`` (the mean) over
    its claims of each claim's best cell grade."""
    return [
        float(aggregate([sigmoid(beta[0] + cells @ beta[1:]).max() for cells in claims]))
        for _, _, claims, _ in records
    ]


def area(labels: Sequence[bool], values: Sequence[float]) -> float:
    """AUROC over the records whose value is defined."""
    v, y = np.asarray(values, dtype=float), np.asarray(labels, dtype=bool)
    keep = ~np.isnan(v)
    return round(auroc(v[keep & y], v[keep & ~y]), 4)


def evaluate(records: Sequence[Record], beta: np.ndarray) -> dict[str, dict[str, float]]:
    """Dev AUROC per dataset: in-sample, leave-one-family-out, leave-one-file-out, and the
    baseline's (module doc)."""
    out: dict[str, dict[str, float]] = {}
    for ds, family in FAMILIES.items():
        mine = [r for r in records if r[0] == ds]
        held_out = fit([r for r in records if FAMILIES[r[0]] != family])
        held_file = fit([r for r in records if r[0] != ds])
        labels = [r[1] for r in mine]
        out[ds] = {
            "in_sample": area(labels, scores(mine, beta)),
            "leave_family_out": area(labels, scores(mine, held_out)),
            "leave_file_out": area(labels, scores(mine, held_file)),
            "token_overlap": area(labels, [r[3] for r in mine]),
        }
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--date", default=datetime.date.today().isoformat())
    args = parser.parse_args(argv)
    judge = OfflineJudge(graded=False)
    records: list[Record] = []
    for ds, recs in dev_sets(args.data).items():
        for r in recs:
            claims = features(judge, r)
            if claims:
                records.append((ds, r.label, claims, token_overlap(r.claim, r.contexts)))
    beta = fit(records)
    dev = evaluate(records, beta)
    for ds, row in dev.items():
        print(ds, json.dumps(row), flush=True)
    model = {
        "features": list(FEATURES),
        "intercept": round(float(beta[0]), 6),
        "coefficients": [round(float(b), 6) for b in beta[1:]],
        "provenance": {
            "script": "benchmarks/fit_support_grade.py",
            "date": args.date,
            "seed": SEED,
            "datasets": {ds: sum(r[0] == ds for r in records) for ds in FAMILIES},
            "splits": "dev only: wice claim_dev; begin_dev_{wow,cmu,tc}; halueval dev half",
            "penalty": PENALTY,
            "rounds": ROUNDS,
            "dev_auroc": dev,
        },
    }
    args.out.write_text(json.dumps(model, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}", flush=True)


if __name__ == "__main__":
    main()

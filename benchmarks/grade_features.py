"""Dev-only check of candidate record-level features for the offline judge's support grade
(issue 12: BEGIN asks that the *whole* response be attributable).

    python -m benchmarks.grade_features [--data DIR]

Each variant appends record-level columns to every cell's (r, o, x, n, v, u) of
``benchmarks.fit_support_grade`` and is fitted and scored exactly as that script does (same dev
records, weights, alternating fit); printed per dataset: dev AUROC in-sample /
leave-one-family-out / token overlap. Features, over the record's whole response ``R`` (before
claim splitting, so first-person and opinion sentences count) and its contexts ``K``:

- ``whole``: ``grading.word_overlap(R, K)`` (the share of R's content words found in K; 0 when
  R has none);
- ``weakest``: min over R's sentences (``nlp.text.split_sentences``) with content words of the
  share of their content words found in K (1 when none has any);
- ``dropped_absent``: the share of R's content words that no factual claim
  (``claims.factual(claims.decompose(R))``) holds and K does not hold.

A variant is worth adopting only if it lifts BEGIN's leave-one-family-out AUROC without lowering
WiCE's or HaluEval's (no test record is read here).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from benchmarks.fit_support_grade import (
    FAMILIES,
    Record,
    area,
    dev_sets,
    features,
    fit,
    scores,
)
from probeguard.detectors.claims import decompose, factual
from probeguard.detectors.grading import word_overlap
from probeguard.detectors.offline_judge import OfflineJudge
from probeguard.engine.bench.judges_data import LabelledClaim
from probeguard.engine.bench.judges_models import token_overlap
from probeguard.nlp.text import content_words, split_sentences

VARIANTS: dict[str, tuple[str, ...]] = {
    "v6": (),
    "+whole": ("whole",),
    "+weakest": ("weakest",),
    "+whole+weakest": ("whole", "weakest"),
    "+dropped_absent": ("dropped_absent",),
    "+weakest+dropped_absent": ("weakest", "dropped_absent"),
}


def record_features(record: LabelledClaim) -> dict[str, float]:
    """``whole``, ``weakest`` and ``dropped_absent`` of the module doc."""
    vocab = {t for c in record.contexts for t in content_words(c)}
    whole = word_overlap(record.claim, record.contexts)
    shares = [
        sum(t in vocab for t in toks) / len(toks)
        for toks in (content_words(s) for s in split_sentences(record.claim))
        if toks
    ]
    kept = {t for c in factual(decompose(record.claim)) for t in content_words(c.text)}
    tokens = content_words(record.claim)
    dropped = sum(t not in kept and t not in vocab for t in tokens)
    return {
        "whole": 0.0 if math.isnan(whole) else whole,
        "weakest": min(shares) if shares else 1.0,
        "dropped_absent": dropped / len(tokens) if tokens else 0.0,
    }


def table(records: Sequence[Record]) -> dict[str, tuple[float, float, float]]:
    """Per dataset: dev AUROC in-sample, leave-one-family-out, token overlap."""
    beta = fit(records)
    out = {}
    for ds, family in FAMILIES.items():
        mine = [r for r in records if r[0] == ds]
        held = fit([r for r in records if FAMILIES[r[0]] != family])
        labels = [r[1] for r in mine]
        out[ds] = (
            area(labels, scores(mine, beta)),
            area(labels, scores(mine, held)),
            area(labels, [r[3] for r in mine]),
        )
    return out


def widen(record: Record, extra: dict[str, float], columns: Sequence[str]) -> Record:
    """``record`` with the record-level ``columns`` appended to every cell."""
    ds, label, claims, base = record
    tail = np.asarray([extra[c] for c in columns], dtype=float)
    return ds, label, [np.hstack([c, np.tile(tail, (len(c), 1))]) for c in claims], base


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    args = parser.parse_args(argv)
    judge = OfflineJudge(graded=False)
    base: list[tuple[Record, dict[str, float]]] = []
    for ds, recs in dev_sets(args.data).items():
        for r in recs:
            claims = features(judge, r)
            if claims:
                record = (ds, r.label, claims, token_overlap(r.claim, r.contexts))
                base.append((record, record_features(r)))
    for name, columns in VARIANTS.items():
        print(name, flush=True)
        for ds, (ins, lofo, overlap) in table([widen(r, x, columns) for r, x in base]).items():
            print(f"  {ds}: in {ins:.4f}  lofo {lofo:.4f}  overlap {overlap:.4f}", flush=True)


if __name__ == "__main__":
    main()

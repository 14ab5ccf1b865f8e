"""Dev-only check of candidate record-level features for the offline judge's support grade
(issue 12: BEGIN asks that the *whole* response be attributable).

    python -m benchmarks.grade_features [--data DIR]

Each variant appends record-level columns to every cell's (r, o, x, n, v, u, p) of
``benchmarks.fit_support_grade`` and is fitted and scored exactly as that script does (same dev
records, weights, alternating fit); printed per dataset: dev AUROC in-sample,
leave-one-family-out, leave-one-file-out and token overlap (``fit_support_grade.evaluate``). Features, over the record's whole response ``R`` (before
claim splitting, so first-person and opinion sentences count) and its contexts ``K``:

- ``whole``: ``grading.word_overlap(R, K)`` (the share of R's content words found in K; 0 when
  R has none);
- ``weakest``: min over R's sentences (``nlp.text.split_sentences``) with content words of the
  share of their content words found in K (1 when none has any);
- ``dropped_absent``: the share of R's content words that no factual claim
  (``claims.factual(claims.decompose(R))``) holds and K does not hold;
- ``weakest_statement``: min of ``grading.word_overlap(c, K)`` over R's factual claims ``c``
  that are not unverifiable (``claims.is_unverifiable``) and have content words (1 when none).

A variant is worth adopting only if it lifts BEGIN's leave-one-family-out AUROC without lowering
WiCE's or HaluEval's (no test record is read here).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from benchmarks.fit_support_grade import Record, dev_sets, evaluate, features, fit
from probeguard.detectors.claims import decompose, factual, is_unverifiable
from probeguard.detectors.grading import word_overlap
from probeguard.detectors.offline_judge import OfflineJudge
from probeguard.engine.bench.judges_data import LabelledClaim
from probeguard.engine.bench.judges_models import token_overlap
from probeguard.nlp.text import content_words, split_sentences

VARIANTS: dict[str, tuple[str, ...]] = {
    "grade 8": (),
    "+whole": ("whole",),
    "+weakest": ("weakest",),
    "+whole+weakest": ("whole", "weakest"),
    "+dropped_absent": ("dropped_absent",),
    "+weakest+dropped_absent": ("weakest", "dropped_absent"),
    "+weakest_statement": ("weakest_statement",),
}


def record_features(record: LabelledClaim) -> dict[str, float]:
    """``whole``, ``weakest``, ``dropped_absent`` and ``weakest_statement`` of the module
    doc."""
    vocab = {t for c in record.contexts for t in content_words(c)}
    whole = word_overlap(record.claim, record.contexts)
    shares = [
        sum(t in vocab for t in toks) / len(toks)
        for toks in (content_words(s) for s in split_sentences(record.claim))
        if toks
    ]
    claims = factual(decompose(record.claim))
    kept = {t for c in claims for t in content_words(c.text)}
    statements = [
        word_overlap(c.text, record.contexts) for c in claims if not is_unverifiable(c.text)
    ]
    covered = [o for o in statements if not math.isnan(o)]
    tokens = content_words(record.claim)
    dropped = sum(t not in kept and t not in vocab for t in tokens)
    return {
        "whole": 0.0 if math.isnan(whole) else whole,
        "weakest": min(shares) if shares else 1.0,
        "dropped_absent": dropped / len(tokens) if tokens else 0.0,
        "weakest_statement": min(covered) if covered else 1.0,
    }


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
        records = [widen(r, x, columns) for r, x in base]
        for ds, row in evaluate(records, fit(records)).items():
            print(f"  {ds}: " + "  ".join(f"{k} {v:.4f}" for k, v in row.items()), flush=True)


if __name__ == "__main__":
    main()

"""``probeguard bench judges``: each judge against human labels — WiCE (supported vs not),
BEGIN (fully attributable vs not), HaluEval QA (right vs hallucinated answer given the
knowledge) — beside a token-overlap baseline and published anchors. No pipeline is called.

Protocol, per dataset and judge (records and splits: ``engine.bench.judges_data``; judges,
scores and the baseline: ``engine.bench.judges_models``):

1. every dev and test record gets the judge's score (NaN = unscored, left out and counted);
2. the threshold t chosen on dev by the one-standard-error rule (``stats.stable_threshold``:
   the midpoint of the band of cuts whose dev balanced accuracy is within one standard error
   of the best; the rule "supported iff score ≥ t"), for every judge and the baseline alike;
3. on test at that t: balanced accuracy, per-class precision and recall (Wilson), and AUROC of
   the score (P(score of a supported record > score of an unsupported one) + ½·P(tie),
   ``metrics.gate.auroc``); for a judge also the balanced accuracy of its own decision
   (every claim supported: ``judges_models.judged``), which needs no dev split.

Intervals on balanced accuracy and AUROC: a 95% percentile bootstrap over test records that
resamples clusters (``engine.bench.judge.cluster_bootstrap``: a HaluEval question's two
answers move together; elsewhere a cluster is one record), ``resamples`` draws from a
generator seeded by (seed, crc32 of "dataset/judge"), so a row does not depend on which other
judges ran; each dataset's order and split likewise by (seed, crc32 of its name). Limits: ``limit`` records per split and dataset for every row; SmolLM2 at most
``smollm2_limit`` (a stratified seeded prefix of the same order, so its records are a subset
of the others').

**Paired comparison with the baseline** (each judge row): ΔBA = BA(judge) − BA(baseline),
each at its own dev threshold, and ΔAUROC likewise, over the test records both scored,
with a 95% paired cluster-bootstrap interval (``stats.paired_cluster_difference``: one
cluster draw serves both, from a generator seeded by (seed, crc32 of
"dataset/judge/paired")). The judge beats the baseline by a margin the interval shows when
the interval's low end is above 0.
"""

from __future__ import annotations

import math
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from probeguard._version import __version__
from probeguard.core.errors import InputError
from probeguard.core.estimate import Estimate
from probeguard.detectors.config import JudgeConfig
from probeguard.engine.bench.judge import RESAMPLES, cluster_bootstrap
from probeguard.engine.bench.judges_data import (
    DATASETS,
    JudgeSet,
    LabelledClaim,
    load_judge_set,
    missing_files,
    take,
)
from probeguard.engine.bench.judges_models import JUDGE_NAMES, JudgeSpec, Scored, build_specs
from probeguard.metrics.gate import auroc
from probeguard.reports.bench_judges import render_judges
from probeguard.results.bench_judges import (
    JudgeAnchor,
    JudgeDataset,
    JudgeRow,
    JudgesBench,
    JudgesBenchSettings,
    JudgeScore,
    Skipped,
)
from probeguard.stats import (
    balanced_accuracy,
    class_rates,
    paired_cluster_difference,
    stable_threshold,
)

__all__ = ["ANCHORS", "SMOLLM2_LIMIT", "measure", "paired", "render_table", "run_judges"]

SMOLLM2_LIMIT = 10
"""SmolLM2's default cap per split and dataset (20 records a dataset): it took 17-130 s a
record on a loaded 2-core machine (two attempts when its reply is not the judge's JSON)."""
NAN = math.nan
ANCHORS = (
    JudgeAnchor(
        system="Bespoke-MiniCheck-7B",
        balanced_accuracy=0.774,
        scope="LLM-AggreFact: mean balanced accuracy over its 11 datasets (WiCE among them)",
        source="LLM-AggreFact leaderboard (Tang, Laban & Durrett 2024, 'MiniCheck: Efficient "
        "Fact-Checking of LLMs on Grounding Documents'; llm-aggrefact.github.io)",
    ),
)
Progress = Callable[[str, int, int], None]
Pairs = Sequence[tuple[LabelledClaim, float]]


def _cap(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


def _rng(seed: int, key: str) -> np.random.Generator:
    """A generator for one purpose: seeded by (seed, crc32(key)), so one dataset's split or
    one row's intervals do not depend on what else ran."""
    return np.random.default_rng([seed, zlib.crc32(key.encode())])


def _bootstrap(
    stat: Callable[[np.ndarray], float], clusters: Sequence[str], rng: np.random.Generator, n: int
) -> Estimate:
    return cluster_bootstrap(stat, clusters, rng=rng, resamples=n)


def measure(
    spec_name: str,
    kind: str,
    dataset: str,
    dev: Sequence[tuple[LabelledClaim, float]],
    test: Sequence[tuple[LabelledClaim, float]],
    *,
    rng: np.random.Generator,
    resamples: int = RESAMPLES,
    seconds: float = 0.0,
    decisions: Sequence[bool] | None = None,
) -> JudgeRow:
    """One row of the table: the dev threshold, then the test measures (module doc).
    ``decisions``: the judge's own call per test record (default: score ≥ 1)."""
    threshold = stable_threshold([s for _, s in dev], [r.label for r, _ in dev])
    called = [s >= 1.0 for _, s in test] if decisions is None else list(decisions)
    own = np.asarray([c for c, (_, s) in zip(called, test) if not math.isnan(s)], dtype=bool)
    kept = [(r, s) for r, s in test if not math.isnan(s)]
    scores = np.asarray([s for _, s in kept], dtype=float)
    labels = np.asarray([r.label for r, _ in kept], dtype=bool)
    clusters = [r.cluster for r, _ in kept]
    predicted = scores >= threshold if not math.isnan(threshold) else np.zeros(0, dtype=bool)

    def ba(pred: np.ndarray) -> Callable[[np.ndarray], float]:
        return lambda idx: balanced_accuracy(pred[idx], labels[idx])

    nan = Estimate(value=NAN, low=NAN, high=NAN, n=len(kept), method="cluster bootstrap")
    decided = not math.isnan(threshold)
    rates = class_rates(predicted if decided else [], labels if decided else [])
    return JudgeRow(
        judge=spec_name,
        kind="baseline" if kind == "baseline" else "judge",
        dataset=dataset,
        dev=len(dev),
        test=len(test),
        unscored_test=len(test) - len(kept),
        threshold=threshold,
        balanced_accuracy=_bootstrap(ba(predicted), clusters, rng, resamples) if decided else nan,
        balanced_accuracy_as_judged=(
            None if kind == "baseline" else _bootstrap(ba(own), clusters, rng, resamples)
        ),
        auroc=_bootstrap(
            lambda idx: auroc(scores[idx][labels[idx]], scores[idx][~labels[idx]]),
            clusters,
            rng,
            resamples,
        ),
        precision_supported=rates.precision_positive,
        recall_supported=rates.recall_positive,
        precision_not=rates.precision_negative,
        recall_not=rates.recall_negative,
        seconds=round(seconds, 3),
    )


def _call(scores: np.ndarray, threshold: float) -> np.ndarray:
    return scores >= threshold if not math.isnan(threshold) else np.zeros(len(scores), bool)


def paired(
    row: JudgeRow,
    base: JudgeRow,
    test: Pairs,
    base_test: Pairs,
    *,
    rng: np.random.Generator,
    resamples: int = RESAMPLES,
) -> JudgeRow:
    """``row`` with ΔBA and ΔAUROC against the baseline row ``base`` (module doc) over the
    test records both scored (matched by id)."""
    theirs = {r.id: s for r, s in base_test}
    both = [
        (r, s, theirs[r.id])
        for r, s in test
        if not math.isnan(s) and r.id in theirs and not math.isnan(theirs[r.id])
    ]
    labels = np.asarray([r.label for r, _, _ in both], dtype=bool)
    mine = np.asarray([s for _, s, _ in both], dtype=float)
    other = np.asarray([b for _, _, b in both], dtype=float)
    clusters = [r.cluster for r, _, _ in both]

    def ba(calls: np.ndarray) -> Callable[[np.ndarray], float]:
        return lambda idx: balanced_accuracy(calls[idx], labels[idx])

    def area(scores: np.ndarray) -> Callable[[np.ndarray], float]:
        return lambda idx: auroc(scores[idx][labels[idx]], scores[idx][~labels[idx]])

    decided = not (math.isnan(row.threshold) or math.isnan(base.threshold))
    nan = Estimate(value=NAN, low=NAN, high=NAN, n=len(both), method="paired cluster bootstrap")
    return row.model_copy(
        update={
            "balanced_accuracy_vs_baseline": paired_cluster_difference(
                ba(_call(mine, row.threshold)),
                ba(_call(other, base.threshold)),
                clusters,
                rng=rng,
                resamples=resamples,
            )
            if decided
            else nan,
            "auroc_vs_baseline": paired_cluster_difference(
                area(mine), area(other), clusters, rng=rng, resamples=resamples
            ),
        }
    )


def _score(
    spec: JudgeSpec, records: Sequence[LabelledClaim], progress: Progress | None
) -> tuple[list[Scored], float]:
    started = time.perf_counter()
    out = []
    for i, r in enumerate(records):
        out.append(spec.score(r))
        if progress is not None:
            progress(spec.name, i + 1, len(records))
    return out, time.perf_counter() - started


def _dataset_info(s: JudgeSet) -> JudgeDataset:
    return JudgeDataset(
        name=s.name,
        split_rule=s.split_rule,
        files=list(s.files),
        dev=len(s.dev),
        dev_supported=sum(r.label for r in s.dev),
        test=len(s.test),
        test_supported=sum(r.label for r in s.test),
    )


def _run_set(
    s: JudgeSet,
    spec: JudgeSpec,
    *,
    limit: int | None,
    seed: int,
    resamples: int,
    progress: Progress | None,
) -> tuple[JudgeRow, list[JudgeScore], Pairs]:
    cap = _cap(limit, spec.limit)
    dev, test = take(s.dev, cap), take(s.test, cap)
    scored, seconds = _score(spec, dev + test, progress)
    values = [v[0] if isinstance(v, tuple) else v for v in scored]
    calls = [v[1] if isinstance(v, tuple) else v >= 1.0 for v in scored[len(dev) :]]
    dev_pairs, test_pairs = list(zip(dev, values[: len(dev)])), list(zip(test, values[len(dev) :]))
    rng = _rng(seed, f"{s.name}/{spec.name}")
    row = measure(
        spec.name,
        spec.kind,
        s.name,
        dev_pairs,
        test_pairs,
        rng=rng,
        resamples=resamples,
        seconds=seconds,
        decisions=calls,
    )
    saved = [
        JudgeScore(dataset=s.name, judge=spec.name, split=split, id=r.id, label=r.label, score=v)
        for split, pairs in (("dev", dev_pairs), ("test", test_pairs))
        for r, v in pairs
    ]
    return row, saved, test_pairs


def run_judges(
    data_dir: Path,
    *,
    judges: Sequence[str] = JUDGE_NAMES,
    limit: int | None = None,
    smollm2_limit: int | None = SMOLLM2_LIMIT,
    seed: int = 0,
    resamples: int = RESAMPLES,
    config: JudgeConfig | None = None,
    environ: Mapping[str, str] | None = None,
    progress: Progress | None = None,
) -> JudgesBench:
    """Every dataset found under ``data_dir`` through every available judge (module doc).
    A dataset whose files are missing is skipped with the paths; ``InputError`` when all
    are, or for a bad limit or judge name."""
    for field, value in (("limit", limit), ("smollm2_limit", smollm2_limit)):
        if value is not None and value < 2:
            raise InputError(
                f"must be at least 2 (one dev and one test record), got {value}", field=field
            )
    try:
        specs, skipped = build_specs(
            judges, config or JudgeConfig(), smollm2_limit=smollm2_limit, environ=environ
        )
    except ValueError as exc:
        raise InputError(str(exc), field="judges") from None
    sets, skipped_sets = [], []
    for name in DATASETS:
        missing = missing_files(data_dir, name)
        if missing:
            skipped_sets.append(
                Skipped(name=name, reason="not found: " + ", ".join(str(p) for p in missing))
            )
            continue
        sets.append(load_judge_set(data_dir, name, _rng(seed, name)))
    if not sets:
        raise InputError(
            f"no judge benchmark data under {data_dir} (set PROBEGUARD_SHARED_DATA to the "
            "folder that holds wice/, begin/ and halueval/)",
            field="data",
        )
    rows, scores = [], []
    for s in sets:
        runs = [
            _run_set(s, spec, limit=limit, seed=seed, resamples=resamples, progress=progress)
            for spec in specs
        ]
        base_row, _, base_test = runs[0]  # build_specs puts the baseline first
        for row, saved, test in runs:
            if row.kind != "baseline":
                rng = _rng(seed, f"{s.name}/{row.judge}/paired")
                row = paired(row, base_row, test, base_test, rng=rng, resamples=resamples)
            rows.append(row)
            scores += saved
    return JudgesBench(
        probeguard_version=__version__,
        seed=seed,
        settings=JudgesBenchSettings(
            judges=list(judges),
            limit=limit,
            smollm2_limit=smollm2_limit,
            resamples=resamples,
            judge_config={spec.name: spec.describe for spec in specs},
            data_dir=str(data_dir),
        ),
        datasets=[_dataset_info(s) for s in sets],
        rows=rows,
        skipped_judges=[Skipped(name=n, reason=r) for n, r in skipped.items()],
        skipped_datasets=skipped_sets,
        anchors=list(ANCHORS),
        scores=scores,
    )


def render_table(result: JudgesBench) -> str:
    """``bench.md`` (``reports.bench_judges.render_judges``)."""
    return render_judges(result)

"""``probeguard bench judge``: the offline judge side by side with string-level baselines, on
records whose labels are known by construction (``engine.bench.judge_data``). Every record is
scored by ``engine.evaluate.score_record`` — what ``probeguard eval`` runs per record — with
the configured judges (the offline one by default); no pipeline is called.

Measures (n = records scored; a NaN score is unscored, counted apart and left out):

HaluEval (right vs hallucinated answer, same question and contexts):

- ``faithfulness_auroc`` = P(f(right) > f(hallucinated)) + ½·P(tie) over all scored
  (right, hallucinated) pairs (``metrics.gate.auroc``, Mann–Whitney), beside the same AUROC
  of the ``verbatim`` and ``overlap`` baselines; 0.5 = no separation.
- ``faithful_right`` / ``faithful_hallucinated`` = share with faithfulness 1.0 (Wilson);
  ``verbatim_right`` / ``verbatim_hallucinated`` likewise for the verbatim baseline.
- ``answer_relevancy_median_right``: median answer relevancy of the right answers (input =
  the question).

XQuAD (gold answer over its gold paragraph; ground truth = the gold answer):

- ``faithful`` = share with faithfulness 1.0, beside ``verbatim`` (share) and ``overlap``
  (mean); ``answer_relevancy_median``; ``recall_full`` = share with context recall 1.0.
- Gold may be missing (half the contexts swapped for another article's paragraph):
  ``recall_agreement`` = share where (recall > 0) == (gold paragraph present), beside
  ``verbatim_agreement`` (gold answer verbatim in the context as the call);
  ``recall_when_present`` / ``recall_when_absent`` = share with recall > 0 in each group.

Intervals: a percentile bootstrap that resamples clusters — the HaluEval question (its two
records move together) and the XQuAD paragraph (about five questions share one) — with
``resamples`` draws from ``numpy.random.default_rng(seed)``; Wilson where records are
independent (the HaluEval shares). ``method`` names which.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from probeguard._version import __version__
from probeguard.config.models import ScanConfig
from probeguard.core.errors import InputError
from probeguard.core.estimate import Estimate
from probeguard.dataset.halueval import load_halueval_qa
from probeguard.dataset.squad import load_squad
from probeguard.detectors.config import JudgeConfig
from probeguard.detectors.factory import build_judges
from probeguard.engine.bench.judge_data import (
    HALUEVAL_FILE,
    XQUAD_FILE,
    JudgeRecord,
    halueval_records,
    overlap,
    sample,
    verbatim,
    xquad_records,
    xquad_swapped,
)
from probeguard.engine.evaluate import score_record
from probeguard.metrics.gate import auroc
from probeguard.reports.bench import render_judge
from probeguard.results.bench import (
    JudgeBench,
    JudgeBenchSettings,
    JudgeHaluEval,
    JudgeRecordScore,
    JudgeXquad,
)
from probeguard.stats import cluster_members, wilson

__all__ = ["RESAMPLES", "Scored", "cluster_bootstrap", "render_table", "run_judge", "score_all"]

RESAMPLES = 2000
CLUSTER_METHOD = "cluster bootstrap"
NAN = math.nan


@dataclass(frozen=True)
class Scored:
    """One record's label, cluster and scores (NaN = unscored)."""

    id: str
    part: str
    label: bool
    cluster: str
    faithfulness: float
    answer_relevancy: float
    context_recall: float
    verbatim: float
    overlap: float

    def saved(self) -> JudgeRecordScore:
        return JudgeRecordScore.model_validate(self.__dict__)


def score_all(records: Sequence[JudgeRecord], part: str, judges: Any) -> tuple[list[Scored], float]:
    """Every record through ``score_record`` (and the baselines); the seconds spent in
    ``score_record`` alone."""
    out = []
    spent = 0.0
    for jr in records:
        rec = jr.record
        started = time.perf_counter()
        _, values = score_record(rec, None, judges)
        spent += time.perf_counter() - started
        answer, contexts = rec.answer or "", list(rec.retrieval_context or ())
        out.append(
            Scored(
                id=rec.id,
                part=part,
                label=jr.label,
                cluster=jr.cluster,
                faithfulness=values["faithfulness"],
                answer_relevancy=values["answer_relevancy"],
                context_recall=values["context_recall"],
                verbatim=verbatim(answer, contexts),
                overlap=overlap(answer, contexts),
            )
        )
    return out, spent


def cluster_bootstrap(
    stat: Callable[[np.ndarray], float],
    clusters: Sequence[str],
    *,
    rng: np.random.Generator,
    resamples: int = RESAMPLES,
) -> Estimate:
    """``stat`` over all records (its argument: an array of record indices) with a 95%
    percentile bootstrap interval that resamples whole clusters (Davison & Hinkley 1997,
    §3.8). n = records. Draws whose statistic is NaN are dropped; NaN when all are."""
    n = len(clusters)
    value = stat(np.arange(n)) if n else NAN
    if n == 0 or math.isnan(value):
        return Estimate(value=NAN, low=NAN, high=NAN, n=n, method=CLUSTER_METHOD)
    members = cluster_members(clusters)
    k = len(members)
    draws = []
    for _ in range(resamples):
        pick = rng.integers(0, k, size=k)
        draws.append(stat(np.concatenate([members[i] for i in pick])))
    finite = np.asarray([d for d in draws if not math.isnan(d)])
    if finite.size == 0:
        return Estimate(value=value, low=NAN, high=NAN, n=n, method=CLUSTER_METHOD)
    low, high = np.quantile(finite, [0.025, 0.975])
    return Estimate(value=value, low=float(low), high=float(high), n=n, method=CLUSTER_METHOD)


def _scored(rows: Sequence[Scored], key: str) -> list[Scored]:
    return [r for r in rows if not math.isnan(getattr(r, key))]


def _auroc(rows: Sequence[Scored], key: str, rng: np.random.Generator, resamples: int) -> Estimate:
    kept = _scored(rows, key)
    values = np.asarray([getattr(r, key) for r in kept], dtype=float)
    labels = np.asarray([r.label for r in kept], dtype=bool)

    def stat(idx: np.ndarray) -> float:
        v, lab = values[idx], labels[idx]
        return auroc(v[lab], v[~lab])

    return cluster_bootstrap(stat, [r.cluster for r in kept], rng=rng, resamples=resamples)


def _mean(
    rows: Sequence[Scored],
    get: Callable[[Scored], float],
    rng: np.random.Generator,
    resamples: int,
    *,
    median: bool = False,
) -> Estimate:
    """Mean (or median) of ``get`` over the rows where it is not NaN, cluster bootstrap."""
    pairs = [(get(r), r.cluster) for r in rows]
    kept = [(v, c) for v, c in pairs if not math.isnan(v)]
    values = np.asarray([v for v, _ in kept], dtype=float)
    fn = np.median if median else np.mean
    return cluster_bootstrap(
        lambda idx: float(fn(values[idx])),
        [c for _, c in kept],
        rng=rng,
        resamples=resamples,
    )


def _share(rows: Sequence[Scored], key: str, hit: Callable[[float], bool]) -> Estimate:
    kept = _scored(rows, key)
    return wilson(sum(hit(getattr(r, key)) for r in kept), len(kept))


def _flag(value: float, test: Callable[[float], bool]) -> float:
    return NAN if math.isnan(value) else float(test(value))


def summarize_halueval(
    rows: Sequence[Scored], *, split_rows: int, rng: np.random.Generator, resamples: int
) -> JudgeHaluEval:
    """The HaluEval measures of the module doc."""
    right = [r for r in rows if r.label]
    wrong = [r for r in rows if not r.label]
    one = lambda v: v == 1.0
    return JudgeHaluEval(
        questions=len(right),
        records=len(rows),
        split_rows=split_rows,
        faithfulness_auroc=_auroc(rows, "faithfulness", rng, resamples),
        verbatim_auroc=_auroc(rows, "verbatim", rng, resamples),
        overlap_auroc=_auroc(rows, "overlap", rng, resamples),
        faithful_right=_share(right, "faithfulness", one),
        faithful_hallucinated=_share(wrong, "faithfulness", one),
        verbatim_right=_share(right, "verbatim", one),
        verbatim_hallucinated=_share(wrong, "verbatim", one),
        unscored_right=len(right) - len(_scored(right, "faithfulness")),
        unscored_hallucinated=len(wrong) - len(_scored(wrong, "faithfulness")),
        answer_relevancy_median_right=_mean(
            right, lambda r: r.answer_relevancy, rng, resamples, median=True
        ),
    )


def summarize_xquad(
    gold: Sequence[Scored],
    variant: Sequence[Scored],
    *,
    paragraphs: int,
    rng: np.random.Generator,
    resamples: int,
) -> JudgeXquad:
    """The XQuAD measures of the module doc (``variant``: the gold-may-be-missing records,
    swapped and kept)."""
    one = lambda v: v == 1.0
    positive = lambda v: v > 0

    def agree(r: Scored, value: float) -> float:
        return _flag(value, lambda v: positive(v) == r.label)

    present = [r for r in variant if r.label]
    absent = [r for r in variant if not r.label]
    return JudgeXquad(
        questions=len(gold),
        paragraphs=paragraphs,
        faithful=_mean(gold, lambda r: _flag(r.faithfulness, one), rng, resamples),
        verbatim=_mean(gold, lambda r: r.verbatim, rng, resamples),
        overlap=_mean(gold, lambda r: r.overlap, rng, resamples),
        unscored_faithfulness=len(gold) - len(_scored(gold, "faithfulness")),
        answer_relevancy_median=_mean(
            gold, lambda r: r.answer_relevancy, rng, resamples, median=True
        ),
        recall_full=_mean(gold, lambda r: _flag(r.context_recall, one), rng, resamples),
        unscored_recall=len(gold) - len(_scored(gold, "context_recall")),
        swapped=len(absent),
        recall_agreement=_mean(variant, lambda r: agree(r, r.context_recall), rng, resamples),
        verbatim_agreement=_mean(variant, lambda r: agree(r, r.verbatim), rng, resamples),
        recall_when_present=_mean(
            present, lambda r: _flag(r.context_recall, positive), rng, resamples
        ),
        recall_when_absent=_mean(
            absent, lambda r: _flag(r.context_recall, positive), rng, resamples
        ),
        unscored_variant=len(variant) - len(_scored(variant, "context_recall")),
    )


def run_judge(
    data_dir: Path,
    *,
    halueval_limit: int | None = None,
    xquad_limit: int | None = None,
    seed: int = 0,
    resamples: int = RESAMPLES,
    judge: JudgeConfig | None = None,
) -> JudgeBench:
    """Build the records from ``data_dir`` (the shared-data folder), score them and measure.
    A part whose file is missing is left out (None); ``InputError`` when both are."""
    for name, limit in (("halueval_limit", halueval_limit), ("xquad_limit", xquad_limit)):
        if limit is not None and limit < 1:
            raise InputError(f"must be at least 1, got {limit}", field=name)
    halueval_path, xquad_path = data_dir / HALUEVAL_FILE, data_dir / XQUAD_FILE
    have_h, have_x = halueval_path.is_file(), xquad_path.is_file()
    if not (have_h or have_x):
        raise InputError(
            f"neither {halueval_path} nor {xquad_path} found (set PROBEGUARD_SHARED_DATA to "
            "the folder that holds halueval/ and xquad_en/)",
            field="data",
        )
    config = judge if judge is not None else ScanConfig().judge
    judges = build_judges(config)
    rng = np.random.default_rng(seed)
    rows: list[Scored] = []
    spent = 0.0
    halueval = xquad = None
    if have_h:
        h_all = load_halueval_qa(halueval_path)
        h_items = [h_all[i] for i in sample(len(h_all), halueval_limit, rng)]
        scored, seconds = score_all(halueval_records(h_items), "halueval", judges)
        rows += scored
        spent += seconds
        halueval = summarize_halueval(
            scored, split_rows=sum(it.split for it in h_items), rng=rng, resamples=resamples
        )
    if have_x:
        all_items = load_squad(xquad_path)
        paragraphs = list({it.paragraph: it for it in all_items}.values())
        items = [all_items[i] for i in sample(len(all_items), xquad_limit, rng)]
        gold, seconds = score_all(xquad_records(items), "xquad", judges)
        swaps = xquad_swapped(items, paragraphs, rng)
        swapped, more = score_all([s for s in swaps if s is not None], "xquad_swapped", judges)
        rows += gold + swapped
        spent += seconds + more
        replaced = iter(swapped)
        variant = [g if s is None else next(replaced) for g, s in zip(gold, swaps)]
        xquad = summarize_xquad(
            gold,
            variant,
            paragraphs=len({it.paragraph for it in items}),
            rng=rng,
            resamples=resamples,
        )
    return JudgeBench(
        probeguard_version=__version__,
        seed=seed,
        settings=JudgeBenchSettings(
            halueval_limit=halueval_limit,
            xquad_limit=xquad_limit,
            resamples=resamples,
            judge=judges.describe(),
            data={
                "halueval": str(halueval_path) if have_h else None,
                "xquad": str(xquad_path) if have_x else None,
            },
        ),
        halueval=halueval,
        xquad=xquad,
        scoring_ms_per_record=1000 * spent / len(rows) if rows else NAN,
        records=[r.saved() for r in rows],
    )


def render_table(result: JudgeBench) -> str:
    """``bench.md`` (``reports.bench.render_judge``)."""
    return render_judge(result)

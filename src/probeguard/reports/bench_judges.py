"""``bench.md`` of ``probeguard bench judges``: one table per dataset (balanced accuracy at the
dev threshold with its 95% interval, the judge's own decision, AUROC, per-class precision and
recall), then the published anchors, skipped judges and datasets. A pure function of
``JudgesBench`` (the measures: ``engine.bench.judges``)."""

from __future__ import annotations

import math

from probeguard.core.estimate import Estimate
from probeguard.results.bench_judges import JudgeRow, JudgesBench

__all__ = ["render_judges"]

HEAD = (
    "judge",
    "test n (unscored)",
    "dev threshold",
    "balanced accuracy [95%]",
    "BA as judged",
    "AUROC [95%]",
    "ΔBA vs baseline [95% paired]",
    "ΔAUROC vs baseline [95% paired]",
    "P / R supported",
    "P / R not",
    "seconds",
)


def _e(est: Estimate | None) -> str:
    if est is None or math.isnan(est.value):
        return "—"
    return est.format(3)


def _v(est: Estimate) -> str:
    return "—" if math.isnan(est.value) else f"{est.value:.2f}"


def _row(cells: list[str] | tuple[str, ...]) -> str:
    return "| " + " | ".join(cells) + " |"


def _judge_row(r: JudgeRow) -> str:
    name = f"{r.judge} (baseline)" if r.kind == "baseline" else r.judge
    return _row(
        [
            name,
            f"{r.test} ({r.unscored_test})",
            "—" if math.isnan(r.threshold) else f"{r.threshold:.3g}",
            _e(r.balanced_accuracy),
            _e(r.balanced_accuracy_as_judged),
            _e(r.auroc),
            _e(r.balanced_accuracy_vs_baseline),
            _e(r.auroc_vs_baseline),
            f"{_v(r.precision_supported)} / {_v(r.recall_supported)}",
            f"{_v(r.precision_not)} / {_v(r.recall_not)}",
            f"{r.seconds:.1f}",
        ]
    )


def render_judges(result: JudgesBench) -> str:
    """The Markdown of the module doc."""
    s = result.settings
    lines = [
        "# Judges against human labels",
        "",
        f"seed {result.seed}; limit {s.limit or 'none'} records per split (SmolLM2: "
        f"{s.smollm2_limit or 'none'}); {s.resamples} bootstrap resamples. Threshold chosen on "
        "dev (midpoint of the cuts within one standard error of the best balanced accuracy), "
        "reported on test; intervals: cluster bootstrap over test "
        "records; P/R: precision and recall per class. BA as judged: the judge's own call "
        "(every claim supported). Δ vs baseline: judge minus token overlap on the same test "
        "records, paired cluster bootstrap; above the baseline by a margin the interval shows "
        "when its low end is above 0.",
    ]
    if "consensus" in s.judge_config:
        lines += ["", f"Consensus members used: {s.judge_config['consensus']}."]
    for d in result.datasets:
        lines += [
            "",
            f"## {d.name}: dev {d.dev} ({d.dev_supported} supported), test {d.test} "
            f"({d.test_supported} supported); split: {d.split_rule}",
            "",
            _row(HEAD),
            "|" + "---|" * len(HEAD),
            *(_judge_row(r) for r in result.rows if r.dataset == d.name),
        ]
    lines += ["", "## Published anchors (not computed here)", ""]
    lines += [
        f"- {a.system}: balanced accuracy {a.balanced_accuracy:.3f} — {a.scope}. Source: {a.source}."
        for a in result.anchors
    ]
    if result.skipped_judges or result.skipped_datasets:
        lines += ["", "## Skipped", ""]
        lines += [f"- judge {k.name}: {k.reason}" for k in result.skipped_judges]
        lines += [f"- dataset {k.name}: {k.reason}" for k in result.skipped_datasets]
    return "\n".join(lines) + "\n"

"""The ``probeguard eval`` report (``eval.md``): a pure function of ``eval.json``'s model
(``results.eval.EvalArtifact``).

Records are untrusted (questions, answers and contexts may hold markup): every text goes
through ``reports.escape.md_inline``. Nothing that varies between two runs (no timings, no
paths) is shown, so the same inputs give a byte-identical report. ``metrics_table`` and
``unsupported_claim_lines`` are shared with the scan report's standard-metrics section.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from probeguard.metrics.summary import MetricMean
from probeguard.metrics.thresholds import ThresholdCheck
from probeguard.reports.escape import format_estimate, md_inline
from probeguard.results.eval import EvalArtifact

__all__ = ["METRIC_LABELS", "metrics_table", "render_eval_markdown", "unsupported_claim_lines"]

METRIC_LABELS = {
    "context_precision": "Context precision",
    "context_recall": "Context recall",
    "contextual_relevancy": "Contextual relevancy",
    "faithfulness": "Faithfulness",
    "answer_relevancy": "Answer relevancy",
    "exact_match": "Exact match (SQuAD)",
    "token_f1": "Token F1 (word level)",
    "containment": "Answer containment",
}
_SHORT = {
    "context_precision": "CP",
    "context_recall": "CR",
    "contextual_relevancy": "CRel",
    "faithfulness": "F",
    "answer_relevancy": "AR",
    "exact_match": "EM",
    "token_f1": "F1",
    "containment": "contains",
}


def _num(value: Any) -> str:
    return "n/a" if value is None or value != value else f"{value:.3f}"


def metrics_table(
    metrics: Mapping[str, MetricMean], checks: Mapping[str, ThresholdCheck]
) -> list[str]:
    """``| metric | mean [95% CI] (n) | unscored | threshold | result |`` rows."""
    lines = [
        "| metric | mean [95% CI] (n) | unscored | threshold | result |",
        "|---|---|---|---|---|",
    ]
    for name, label in METRIC_LABELS.items():
        if name not in metrics:
            continue
        entry, check = metrics[name], checks.get(name)
        threshold = f"≥ {check.threshold:.2f}" if check else "–"
        result = (
            {"pass": "pass", "fail": "**FAIL**", "unscored": "unscored"}[check.status]
            if check
            else "–"
        )
        lines.append(
            f"| {label} | {format_estimate(entry.mean)} | {entry.unscored} | "
            f"{threshold} | {result} |"
        )
    return lines


def unsupported_claim_lines(
    items: Iterable[tuple[str, str, Sequence[Mapping[str, Any]]]],
) -> list[str]:
    """For each ``(record id, question, claim findings)`` with a contradicted or unsupported
    claim: the claim, its verdict, and what the context says (the contradicting chunk and
    sentence, or the closest one)."""
    lines: list[str] = []
    for rid, question, claims in items:
        bad = [c for c in claims if c.get("label") in ("contradicted", "unsupported")]
        if not bad:
            continue
        lines.append(f"- **{md_inline(rid, 60)}** — {md_inline(question, 120)}")
        for c in bad:
            chunk = c.get("contradicting_chunk_id") or c.get("best_chunk_id")
            says = c.get("contradicting_sentence") or c.get("context_says") or ""
            where = (
                f"chunk {md_inline(chunk, 60)} says: “{md_inline(says, 240)}”"
                if chunk
                else "no context to compare with"
            )
            lines.append(f"  - {c['label']}: “{md_inline(c['claim'], 200)}” — {where}")
    return lines


def render_eval_markdown(data: EvalArtifact) -> str:
    """The report (see the module docstring)."""
    summary, thresholds = data.summary, data.thresholds
    judge = data.judge
    failed = ", ".join(METRIC_LABELS[k] for k in thresholds.failed)
    verdict = "**PASS**" if thresholds.passed else f"**FAIL** — below threshold: {failed}"
    pipe = data.pipeline
    lines = [
        "# ProbeGuard evaluation report",
        "",
        f"- Dataset: {md_inline(data.dataset, 80)}; {summary.records} records, "
        f"{data.errors} errors; seed {data.seed}",
        f"- ProbeGuard {md_inline(data.probeguard_version)}; claim judge "
        f"{md_inline(judge['claims'], 80)} (`{judge['claims_fingerprint'][:12]}`), relevance "
        f"{md_inline(judge['relevance'], 40)}",
        (
            "- Pipeline: "
            + (
                f"{md_inline(pipe.name, 60)} (fingerprint "
                f"`{pipe.fingerprint[:12]}`) answered {pipe.cases} records"
                if pipe
                else "not called (every record has an answer and contexts)"
            )
        ),
        f"- Result: {verdict}",
    ]
    if thresholds.unscored:
        lines.append(
            "- Thresholds with nothing to score (neither pass nor fail): "
            + ", ".join(METRIC_LABELS[k] for k in thresholds.unscored)
        )
    lines += [
        "",
        "## Metrics",
        "",
        "Means over the records where a metric is defined, with percentile-bootstrap 95% "
        "intervals; a record with nothing to score (e.g. context recall without "
        "groundTruth) is counted as unscored, never as 0.",
        "",
    ]
    lines += metrics_table(summary.metrics, thresholds.checks)
    if summary.by_tag:
        names = list(METRIC_LABELS)
        lines += [
            "",
            "## By tag",
            "",
            "Mean (n) per tag; a record counts in every tag it carries.",
            "",
            "| tag | records | " + " | ".join(_SHORT[n] for n in names) + " |",
            "|---|---|" + "---|" * len(names),
        ]
        for tag, facet in summary.by_tag.items():
            cells = []
            for n in names:
                mean = facet.metrics[n].mean
                cells.append("n/a" if math.isnan(mean.value) else f"{mean.value:.3f} ({mean.n})")
            lines.append(f"| {md_inline(tag, 40)} | {facet.records} | " + " | ".join(cells) + " |")
    results = data.results
    claim_lines = unsupported_claim_lines((r.id, r.input, r.claims) for r in results)
    lines += ["", "## Unsupported claims", ""]
    lines += (
        ["Answer claims the contexts do not support, with what the context says.", ""] + claim_lines
        if claim_lines
        else ["Every judged answer claim is supported."]
    )
    lines += [
        "",
        "## Records",
        "",
        "Legend: " + ", ".join(f"{_SHORT[n]} = {METRIC_LABELS[n]}" for n in METRIC_LABELS) + ".",
        "",
        "| record | tags | " + " | ".join(_SHORT[n] for n in METRIC_LABELS) + " | answer |",
        "|---|---|" + "---|" * len(METRIC_LABELS) + "---|",
    ]
    for r in results:
        cells = [_num(r.metrics[n].value) for n in METRIC_LABELS]
        answer = f"ERROR {md_inline(r.error, 100)}" if r.error else md_inline(r.answer or "", 100)
        lines.append(
            f"| {md_inline(r.id, 40)} | {md_inline(', '.join(r.tags), 40)} | "
            + " | ".join(cells)
            + f" | {answer} |"
        )
    lines.append("")
    return "\n".join(lines)

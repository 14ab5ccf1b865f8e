"""The backend comparison in Markdown: a pure function of ``comparison.json``'s model
(``results.sweep.Comparison``; built by ``probeguard.engine.sweep``), so the same runs give a
byte-identical page."""

from __future__ import annotations

import math
from typing import Any

from probeguard.reports.escape import format_estimate, md_inline
from probeguard.results.sweep import Comparison, ScoreSpread


def _cell(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.3f}"
    return format_estimate(value)


def _scores(d: ScoreSpread) -> str:
    if d.min is None or d.median is None or d.max is None:
        return f"none retrieved (n={d.n})"
    empty = f", {d.empty} empty" if d.empty else ""
    return f"{d.min:.4g} / {d.median:.4g} / {d.max:.4g} (n={d.n}{empty})"


def render_comparison(comparison: Comparison) -> str:
    backends = [str(b) for b in comparison.backends]
    header = "| metric | " + " | ".join(md_inline(b) for b in backends) + " |"
    rule = "|---" * (len(backends) + 1) + "|"
    gate = comparison.min_score
    lines = [
        "# ProbeGuard backend comparison",
        "",
        f"Same corpus (fingerprint `{str(comparison.corpus_fingerprint or 'n/a')[:12]}`), "
        f"questions, probes and seed ({comparison.seed}); only the retriever differs. "
        f"Gate: {'none' if gate is None else f'min_score {gate}'}. "
        "Rates are Wilson 95% intervals; each backend's full report is in its folder.",
        "",
        "## Headline rates",
        "",
        header,
        rule,
    ]
    for row in comparison.rows:
        cells = " | ".join(_cell(row.values.get(b)) for b in backends)
        lines.append(f"| {md_inline(row.label)} | {cells} |")
    lines += [
        "",
        "## The min_score gate",
        "",
        "Top retrieved score (min / median / max) of answerable golden questions against "
        "unanswerable ones; AUROC of that score (0.5: it says nothing about "
        "answerability); `saturated` when the spread (q95 − q05)/|q95| of the top scores is "
        "small, so any threshold refuses almost all or almost none; the best gate "
        "maximises abstention − false refusal (Youden's J).",
        "",
        "| backend | answerable top score | unanswerable top score | AUROC | spread | "
        "saturated | configured gate: false refusal / abstention | best gate: "
        "min_score, false refusal / abstention |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for b in backends:
        g = comparison.gate[b]
        configured = g.configured_gate
        best = g.best_gate
        conf = (
            "–"
            if configured is None
            else f"{format_estimate(configured.false_refusal)} / "
            f"{format_estimate(configured.abstention)}"
        )
        best_s = (
            "–"
            if best is None
            else f"{best.min_score:.4g}: {format_estimate(best.false_refusal)} / "
            f"{format_estimate(best.abstention)}"
        )
        lines.append(
            f"| {md_inline(b)} | {_scores(g.answerable_top_score)} | "
            f"{_scores(g.unanswerable_top_score)} | {_cell(g.auroc)} | "
            f"{_cell(g.spread)} | {'yes' if g.saturated else 'no'} | {conf} | "
            f"{best_s} |"
        )
    lines.append("")
    return "\n".join(lines)

"""``eval.html``: ``probeguard eval``'s results as one self-contained page (the shell of
``reports.html_page``), a pure function of ``eval.json``'s model.

It opens with the verdict in one line — ``PASS`` when no metric with a threshold is below it
(``metrics.thresholds``), else ``FAIL`` naming those metrics — then the scorecard (a gauge per
metric: mean, bootstrap interval, threshold, status) and one sortable row per record with its
metric values (``–`` when unscored), its answer and error. Untrusted text is escaped
(``html_escape.esc``); the page holds no time stamp.
"""

from __future__ import annotations

from probeguard.reports.html_escape import esc
from probeguard.reports.html_page import html_page
from probeguard.reports.html_svg import Gauge, gauge_table
from probeguard.results.eval import EvalArtifact, EvalRecordResult

__all__ = ["eval_verdict", "render_eval_html"]

_ANSWER_CHARS = 300


def eval_verdict(artifact: EvalArtifact) -> str:
    """The eval's verdict in one line (rule in the module doc)."""
    t = artifact.thresholds
    counts = f"{artifact.summary.records} records, {artifact.errors} errors"
    if t.failed:
        return f"FAIL: below threshold: {', '.join(t.failed)} ({counts})."
    unscored = f"; unscored: {', '.join(t.unscored)}" if t.unscored else ""
    return f"PASS: every metric with a threshold meets it ({counts}{unscored})."


def _gauges(artifact: EvalArtifact) -> list[Gauge]:
    checks = artifact.thresholds.checks
    return [
        Gauge(name, entry.mean, checks[name].threshold if name in checks else None)
        for name, entry in artifact.summary.metrics.items()
    ]


def _cell(value: float | None) -> str:
    if value is None or value != value:
        return '<td data-sort="-1">–</td>'
    return f'<td data-sort="{value:.6f}">{value:.3f}</td>'


def _row(record: EvalRecordResult, metrics: list[str]) -> str:
    answer = record.answer or ""
    if len(answer) > _ANSWER_CHARS:
        answer = answer[: _ANSWER_CHARS - 1] + "…"
    cells = "".join(
        _cell(record.metrics[m].value if m in record.metrics else None) for m in metrics
    )
    return (
        f"<tr><td>{esc(record.id)}</td><td>{esc(', '.join(record.tags))}</td>"
        f"<td>{esc(record.input)}</td>{cells}<td>{esc(answer)}</td>"
        f"<td>{esc(record.error or '')}</td></tr>"
    )


def render_eval_html(artifact: EvalArtifact) -> str:
    """The whole page (module doc)."""
    verdict = eval_verdict(artifact)
    status = verdict.split(":", 1)[0].lower()
    header = (
        f"<h1>ProbeGuard eval: {esc(artifact.dataset)}</h1>"
        f'<p id="verdict" class="verdict {status}">{esc(verdict)}</p>'
    )
    metrics = list(artifact.summary.metrics)
    heads = "".join(f"<th>{esc(m)}</th>" for m in metrics)
    rows = "".join(_row(r, metrics) for r in artifact.results)
    main = (
        '<section id="scorecard"><h2>Scorecard</h2><p>Means over the scored records with '
        "percentile-bootstrap 95% intervals; unscored records are left out, never counted as "
        "0. A dashed tick is the threshold.</p>"
        + gauge_table(_gauges(artifact))
        + '</section><section id="records"><h2>Records</h2>'
        '<table class="sortable"><thead><tr><th>id</th><th>tags</th><th>input</th>'
        + heads
        + "<th>answer</th><th>error</th></tr></thead><tbody>"
        + rows
        + "</tbody></table></section>"
        + f'<p class="meta">ProbeGuard {esc(artifact.probeguard_version)}; full data: '
        "eval.json beside this file.</p>"
    )
    return html_page(f"ProbeGuard eval: {artifact.dataset}", header, main)

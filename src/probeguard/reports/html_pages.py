"""The HTML page beside every other Markdown report: ``fix.html`` (``probeguard fix``),
``comparison.html`` (``sweep``), ``compare.html`` (``compare``) and ``bench.html`` (every
``bench``), each one self-contained page in the scan report's shell (``html_page``).

One generic layout, fed by a small builder per kind: the title and a verdict in one line,
then the plots a reader would rather look at, then the Markdown report's own tables
(``html_markdown``), so the page and the ``.md`` beside it never disagree. Pure functions of
the saved results: the same inputs give the same bytes.

- fix: each fix's targeted failure rate and its probes' failure rates, before vs after;
- sweep: every headline rate with its interval, backends side by side; per backend, the top
  retrieved score of answerable vs unanswerable golden questions with the configured gate and
  the best (Youden) gate (``metrics.gate``);
- compare: each probe and golden slice's failure rate, baseline vs candidate;
- bench: the bench's tables, each table holding rates with intervals plotted under it, plus
  the plots its builder passes (the QASPER bench's, redrawn).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from probeguard.core.estimate import Estimate
from probeguard.reports.html_escape import esc
from probeguard.reports.html_gate import GATE_CAPTION, gate_strip
from probeguard.reports.html_markdown import (
    TableHook,
    markdown_html,
    markdown_inline_html,
    plain_text,
)
from probeguard.reports.html_page import html_page
from probeguard.reports.html_plots import side_by_side
from probeguard.reports.html_probes import as_estimate
from probeguard.results.bench_qasper import QasperBench
from probeguard.results.compare import CompareArtifact
from probeguard.results.fix import FixArtifact
from probeguard.results.sweep import Comparison

__all__ = [
    "Plot",
    "bench_html",
    "compare_html",
    "fix_html",
    "markdown_report_html",
    "qasper_plots",
    "sweep_html",
    "table_rate_plot",
]

TABLE_PLOT_ROWS = 60
"""Tables longer than this get no plot (it would be taller than a screen or two)."""
_NUMBER = r"(-?\d+(?:\.\d+)?)"
_ESTIMATE_CELL = re.compile(rf"^{_NUMBER} \[{_NUMBER}, {_NUMBER}\] \(n=(\d+)\)$")
_DIFFERENCE = re.compile(r"Δ|\bdelta\b|\bdifference\b", re.IGNORECASE)
_NUMERIC_CELL = re.compile(r"^[-\d.,()%/\s]*$")

GateScores = Mapping[str, tuple[Sequence[float], Sequence[float]]]
"""Backend → (answerable, unanswerable) top scores (``metrics.gate.gate_scores``)."""


@dataclass(frozen=True)
class Plot:
    """One plot: an id for its section, a heading, the SVG (already escaped) and one
    sentence that says how to read it."""

    id: str
    title: str
    svg: str
    caption: str


def _split_title(markdown: str) -> tuple[str, str]:
    """The first ``# `` heading's raw text and the Markdown after it."""
    lines = markdown.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("# "):
            return line[2:], "\n".join(lines[:i] + lines[i + 1 :])
        if line.strip():
            break
    return "ProbeGuard report", markdown


def markdown_report_html(
    markdown: str,
    *,
    verdict: str | None = None,
    status: str = "info",
    plots: Sequence[Plot] = (),
    source: str,
    after_table: TableHook | None = None,
) -> str:
    """The page (module doc); ``source`` names the Markdown and JSON files beside it."""
    title, body = _split_title(markdown)
    head = f"<h1>{markdown_inline_html(title)}</h1>"
    if verdict is not None:
        head += f'<p id="verdict" class="verdict {esc(status)}">{esc(verdict)}</p>'
    figures = "".join(
        f'<section id="{esc(p.id)}" class="plot"><h2>{esc(p.title)}</h2>'
        f"<p>{esc(p.caption)}</p>{p.svg}</section>"
        for p in plots
    )
    main = (
        figures
        + f'<section id="report">{markdown_html(body, after_table)}</section>'
        + f'<p class="meta">Full data: {esc(source)} beside this file.</p>'
    )
    return html_page(plain_text(title), head, main)


def fix_plots(artifact: FixArtifact) -> list[Plot]:
    """Before vs after per verified fix: its targeted failures and each re-run probe."""
    rows: list[tuple[str, Sequence[Estimate | None]]] = []
    for fix in artifact.fixes:
        if fix.targeted is not None:
            rows.append((f"{fix.id}: targeted", [fix.targeted.before, fix.targeted.after]))
        for probe, change in sorted((fix.probes or {}).items()):
            pair = change.failure_rate
            rows.append((f"{fix.id}: {probe}", [pair.before, pair.after]))
    if not rows:
        return []
    svg = side_by_side(rows, ["before", "after"], "Failure rate before and after each fix")
    caption = (
        "Failure rates with Wilson 95% intervals before and after each fix was applied and "
        "re-run: a fix helps when the after dot sits left of the before dot."
    )
    return [Plot("before-after", "Before and after", svg, caption)]


def fix_html(artifact: FixArtifact, markdown: str) -> str:
    """``fix.html``: the verdict counts, the before/after plot and ``fix.md``'s tables."""
    counts = ", ".join(f"{n} {v}" for v, n in sorted(artifact.verdicts.items()) if n)
    verdict = f"{len(artifact.fixes)} fixes checked against {artifact.failures} failures" + (
        f": {counts}." if counts else "."
    )
    status = "pass" if artifact.verdicts.get("verified") else "info"
    return markdown_report_html(
        markdown, verdict=verdict, status=status, plots=fix_plots(artifact), source="fix.json"
    )


def sweep_plots(comparison: Comparison, scores: GateScores) -> list[Plot]:
    """Headline rates side by side per backend; per backend the gate's score strip."""
    backends = list(comparison.backends)
    rows: list[tuple[str, Sequence[Estimate | None]]] = []
    for row in comparison.rows:
        ests = [as_estimate(row.values.get(b)) for b in backends]
        if any(e is not None for e in ests):
            rows.append((row.label, ests))
    plots = []
    if rows:
        plots.append(
            Plot(
                "backends",
                "Backends side by side",
                side_by_side(rows, backends, "Headline rates per backend"),
                "Each headline rate with its Wilson 95% interval, one colour per backend; "
                "overlapping intervals mean the scan cannot tell the backends apart.",
            )
        )
    for b in backends:
        if b in scores:
            plots.append(_gate_plot(comparison, b, scores[b]))
    return plots


def _gate_plot(comparison: Comparison, backend: str, pair: tuple[Sequence[float], ...]) -> Plot:
    analysis = comparison.gate.get(backend)
    gates: list[tuple[str, float]] = []
    if comparison.min_score is not None:
        gates.append(("configured gate", comparison.min_score))
    if analysis is not None and analysis.best_gate is not None:
        gates.append(("best gate", analysis.best_gate.min_score))
    return Plot(
        f"gate-{backend}",
        f"Refusal gate: {backend}",
        gate_strip(pair[0], pair[1], gates, f"Top retrieved score, {backend}"),
        GATE_CAPTION,
    )


def sweep_html(comparison: Comparison, scores: GateScores, markdown: str) -> str:
    """``comparison.html``: the backends side by side, the gate strips, ``comparison.md``."""
    cases = ", ".join(f"{b}: {comparison.cases.get(b, 0)}" for b in comparison.backends)
    verdict = f"{len(comparison.backends)} backends on the same cases ({cases})."
    return markdown_report_html(
        markdown, verdict=verdict, plots=sweep_plots(comparison, scores), source="comparison.json"
    )


def compare_plots(artifact: CompareArtifact) -> list[Plot]:
    """Baseline vs candidate failure rate per probe and golden slice."""
    rows: list[tuple[str, Sequence[Estimate | None]]] = [
        (s.slice, [s.baseline_rate, s.candidate_rate])
        for s in artifact.slices
        if s.kind in ("probe", "golden")
    ]
    if not rows:
        return []
    svg = side_by_side(rows, ["baseline", "candidate"], "Failure rate per slice")
    caption = (
        "Each slice's failure rate with its Wilson 95% interval in the baseline and the "
        "candidate run; the checks below say which differences are significant."
    )
    return [Plot("slices", "Baseline vs candidate", svg, caption)]


def compare_html(artifact: CompareArtifact, markdown: str) -> str:
    """``compare.html``: the gate's verdict, the slice plot and ``compare.md``."""
    gate = artifact.gate
    failed = sum(1 for c in gate.checks if not c.passed)
    verdict = f"{gate.status.upper()}: {failed} of {len(gate.checks)} checks failed."
    status = {"pass": "pass", "fail": "fail"}.get(gate.status, "info")
    return markdown_report_html(
        markdown,
        verdict=verdict,
        status=status,
        plots=compare_plots(artifact),
        source="compare.json",
    )


def _cell_estimate(cell: str) -> Estimate | None:
    """A table cell written by ``Estimate.format`` (``0.412 [0.301, 0.531] (n=40)``) as an
    Estimate; None for any other cell."""
    match = _ESTIMATE_CELL.match(plain_text(cell).strip())
    if match is None:
        return None
    value, low, high = (float(match.group(k)) for k in (1, 2, 3))
    return Estimate(value=value, low=low, high=high, n=int(match.group(4)), method="table")


def _is_rate(est: Estimate) -> bool:
    return 0.0 <= est.low <= est.value <= est.high <= 1.0


def _rate_columns(head: list[str], estimates: list[list[Estimate | None]]) -> list[int]:
    """Columns holding at least one estimate, every one of them a rate in [0, 1], and not
    named as a difference (``Δ``, ``delta``, ``difference``): a column of differences or
    ranks is not a rate column even where its cells happen to lie in [0, 1]."""
    cols = []
    for j, name in enumerate(head):
        if _DIFFERENCE.search(plain_text(name)):
            continue
        column = [row[j] for row in estimates if j < len(row) and row[j] is not None]
        if column and all(_is_rate(e) for e in column if e is not None):
            cols.append(j)
    return cols


def _row_label(row: list[str], before: int, index: int) -> str:
    """A table row's name: its text cells before the first rate column (counts and other
    numbers left out), joined with `` / `` and cut to 48 characters."""
    texts = [plain_text(c) for c in row[:before] if c.strip() and not _NUMERIC_CELL.match(c)]
    label = " / ".join(texts) or str(index + 1)
    return label if len(label) <= 48 else label[:47] + "…"


def table_rate_plot(head: list[str], body: list[list[str]]) -> str:
    """A plot under a table whose columns hold rates with intervals (``_rate_columns``): one
    row per table row (``_row_label``), one series per rate column; nothing for a table
    without rate columns or with more than ``TABLE_PLOT_ROWS`` rows."""
    if not body or len(body) > TABLE_PLOT_ROWS:
        return ""
    estimates = [[_cell_estimate(c) for c in row] for row in body]
    cols = _rate_columns(head, estimates)
    if not cols:
        return ""
    rows: list[tuple[str, Sequence[Estimate | None]]] = [
        (
            _row_label(row, cols[0], i),
            [estimates[i][j] if j < len(estimates[i]) else None for j in cols],
        )
        for i, row in enumerate(body)
    ]
    series = [plain_text(head[j]) for j in cols]
    svg = side_by_side(rows, series, "The table's rates with their intervals", label_width=320)
    return f'<div class="table-plot">{svg}</div>'


def bench_html(markdown: str, plots: Sequence[Plot] = ()) -> str:
    """``bench.html``: a bench's tables (``bench.md``), each with its rates plotted
    (``table_rate_plot``), and the bench's own plots."""
    return markdown_report_html(
        markdown,
        plots=plots,
        source="bench.md and the bench's results",
        after_table=table_rate_plot,
    )


def qasper_plots(bench: QasperBench) -> list[Plot]:
    """The QASPER bench's plots, redrawn as inline SVG: mean ECS and token F1 per
    (experiment, condition), one colour per generator."""
    generators = list(dict.fromkeys(r.generator for r in bench.conditions))
    keys = list(dict.fromkeys((r.experiment, r.condition) for r in bench.conditions))
    cells = {(r.experiment, r.condition, r.generator): r for r in bench.conditions}
    plots = []
    for measure, name in (("ecs", "evidence coverage (ECS)"), ("token_f1", "token F1")):
        rows: list[tuple[str, Sequence[Estimate | None]]] = [
            (
                f"{experiment}: {condition}",
                [
                    getattr(cells[(experiment, condition, g)], measure)
                    if (experiment, condition, g) in cells
                    else None
                    for g in generators
                ],
            )
            for experiment, condition in keys
        ]
        title = f"QASPER: {name} by condition"
        plots.append(
            Plot(
                f"qasper-{measure.replace('_', '-')}",
                title,
                side_by_side(rows, generators, title, label_width=260),
                f"Mean {name} per condition with its bootstrap 95% interval, one colour per "
                "generator.",
            )
        )
    return plots

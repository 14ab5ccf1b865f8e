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
- bench: the bench's tables, plus any plots its builder passes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from probeguard.core.estimate import Estimate
from probeguard.reports.html_escape import esc
from probeguard.reports.html_gate import GATE_CAPTION, gate_strip
from probeguard.reports.html_markdown import markdown_html, markdown_inline_html, plain_text
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
]

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
        + f'<section id="report">{markdown_html(body)}</section>'
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


def bench_html(markdown: str, plots: Sequence[Plot] = ()) -> str:
    """``bench.html``: a bench's tables (``bench.md``) and its plots."""
    return markdown_report_html(markdown, plots=plots, source="bench.md and bench.json")


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

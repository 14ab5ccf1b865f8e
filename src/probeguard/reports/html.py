"""``report.html``: one self-contained page per scan, a pure function of the run log.

The first screen holds the verdict, the scorecard (gauges with intervals, pass/fail against
thresholds), the probes' forest plot with both FCS figures, and the top fixes with complete,
copyable config patches (and their verified effect when ``fix.json`` exists). The refusal
gate's picture (``html_gate``: answerable vs unanswerable top scores with the gates) and the
causes follow, then the drill-down: every golden question and probe group, filterable by probe, outcome,
cause and tag, searchable, sortable and reachable by keyboard (``assets/report.js``).

Security: everything is inline (CSS, one script, SVG; no font, image or network fetch) under
``default-src 'none'``; the script runs by its hash; data sits in a JSON block written by
``html_escape.script_json``, and the script writes it into the page with ``textContent`` only,
so untrusted text stays text. The page holds no time stamp: the same run log gives the same
bytes.
"""

from __future__ import annotations

from probeguard.attribution.summary import TopFix
from probeguard.core.estimate import Estimate
from probeguard.core.mechanisms import describe
from probeguard.metrics.golden import GoldenSummary
from probeguard.probes.models import ProbeRunSummary, SkippedProbe
from probeguard.reports.html_data import packed, report_data
from probeguard.reports.html_escape import esc
from probeguard.reports.html_gate import gate_section
from probeguard.reports.html_page import csp, html_page
from probeguard.reports.html_probes import probe_details
from probeguard.reports.html_svg import Gauge, forest_plot, gauge_table
from probeguard.reports.lead import (
    effect_line,
    fix_effect,
    patch_flags,
    patch_yaml,
    verdict_line,
)
from probeguard.results.fix import FixArtifact
from probeguard.results.run import RunLog

__all__ = ["csp", "render_html"]

_GOLDEN_GAUGES = (
    ("retrieval_hit_at_k", "Retrieval hit@k", True),
    ("mrr", "MRR", True),
    ("answer_contains", "Answer contains a gold answer", True),
    ("abstention", "Refused unanswerable (should be high)", True),
    ("false_refusal", "Refused answerable (should be low)", False),
    ("pass_rate", "Golden questions passed", True),
)


def _golden_gauges(golden: GoldenSummary) -> list[Gauge]:
    out = [
        Gauge(label, getattr(golden, key), higher_is_better=better)
        for key, label, better in _GOLDEN_GAUGES
    ]
    if golden.standard is not None:
        checks = golden.standard.thresholds.checks
        for name, entry in golden.standard.metrics.items():
            check = checks.get(name)
            out.append(Gauge(name, entry.mean, check.threshold if check else None))
    return out


def _scorecard(run: RunLog) -> str:
    golden = run.summary.golden
    if golden is None:
        return ""
    return (
        '<section id="scorecard"><h2>Scorecard</h2>'
        f"<p>{golden.cases} golden questions, {golden.errors} errors. Rates with Wilson 95% "
        "intervals, means with bootstrap intervals; a dashed tick is the threshold "
        "(a metric passes when its mean is at least the threshold).</p>"
        + gauge_table(_golden_gauges(golden))
        + "</section>"
    )


def _fcs_lines(run: RunLog) -> str:
    fcs = run.summary.fcs
    if fcs is None:
        return ""
    items = []
    if fcs.empirical is not None:
        items.append(
            f"<li><b>Empirical FCS {esc(fcs.empirical.value.format(3))}</b>: of the golden "
            "questions that fail anything, the share that fail only under a probe while "
            "standard evaluation passes them.</li>"
        )
    seed = "n/a" if fcs.value != fcs.value else f"{fcs.value:.3f}"
    items.append(
        f"<li><b>FCS (seed formula) {esc(seed)}</b>: the share of the probes' union failure "
        "rate that standard evaluation would miss, [1 − Π(1 − r·(1 − w))] / [1 − Π(1 − r)] "
        "over failure rates r and overlap weights w (assumes independent probes).</li>"
    )
    return "<ul>" + "".join(items) + f"</ul><p>{esc(fcs.recommendation)}</p>"


def _probes(run: RunLog) -> str:
    probes = run.summary.probes or {}
    if not probes:
        return ""
    rated: list[tuple[str, Estimate]] = []
    rows = []
    for name, s in probes.items():
        if isinstance(s, SkippedProbe):
            rows.append(
                f"<tr><td>{esc(name)}</td><td>skipped</td><td>–</td><td>{esc(s.skipped)}</td></tr>"
            )
            continue
        assert isinstance(s, ProbeRunSummary)
        rated.append((name, s.failure_rate))
        value = s.failure_rate.value if s.failure_rate.defined else -1.0
        rows.append(
            f'<tr><td>{esc(name)}</td><td data-sort="{value:.6f}">'
            f"{esc(s.failure_rate.format(3) if s.failure_rate.defined else 'n/a')}</td>"
            f"<td>{s.unscored}</td><td>{esc(s.goal)}</td></tr>"
        )
    return (
        '<section id="probes"><h2>Probes</h2>'
        + _fcs_lines(run)
        + forest_plot(rated)
        + '<table class="sortable"><thead><tr><th>probe</th><th>failure rate [95% CI] (n)'
        "</th><th>unscored</th><th>looks for</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
        + probe_details(probes)
        + "</section>"
    )


def _fix(rank: int, fix: TopFix, verified: FixArtifact | None) -> str:
    entry = fix_effect(fix, verified)
    effect = (
        esc(effect_line(entry))
        if entry is not None
        else "not verified yet: run <code>probeguard fix RUN_DIR</code> to re-run the "
        "targeted failures and the benign controls with this patch"
    )
    yaml_id, flags_id = f"patch-{rank}", f"flags-{rank}"
    return (
        f'<article class="fix"><h3>{rank}. {esc(fix.title)}</h3>'
        f"<p>{fix.cases} attributed failures; cause {esc(fix.cause)}: {esc(fix.why)}.</p>"
        f'<p class="effect"><b>Verified effect:</b> {effect}</p>'
        f'<div class="code"><button type="button" class="copy" data-copy="{yaml_id}">'
        f'Copy YAML</button><pre id="{yaml_id}">{esc(patch_yaml(fix.config_patch))}</pre></div>'
        f'<div class="code"><button type="button" class="copy" data-copy="{flags_id}">'
        f"Copy flags</button>"
        f'<pre id="{flags_id}">{esc(patch_flags(fix.config_patch))}</pre></div>'
        f"<p>Other pipelines: {esc(fix.other_pipelines)}</p></article>"
    )


def _fixes(run: RunLog, verified: FixArtifact | None) -> str:
    summary = run.summary.attribution
    if summary is None or not summary.top_fixes:
        return ""
    return (
        '<section id="fixes"><h2>Top fixes</h2>'
        + "".join(_fix(i, f, verified) for i, f in enumerate(summary.top_fixes[:5], 1))
        + "</section>"
    )


def _causes(run: RunLog) -> str:
    summary = run.summary.attribution
    if summary is None:
        return ""
    causes = "".join(f"<tr><td>{esc(c)}</td><td>{n}</td></tr>" for c, n in summary.causes.items())
    mechanisms = "".join(
        f"<tr><td>{esc(m)}</td><td>{esc(describe(m))}</td><td>{n}</td></tr>"
        for m, n in (summary.mechanisms or {}).items()
    )
    return (
        '<section id="causes"><h2>Causes</h2>'
        f"<p>{summary.attributed} of {summary.failures} failures attributed by "
        f"counterfactual re-runs ({summary.skipped} over the cap of {summary.max_cases}).</p>"
        '<div class="cols"><table class="sortable"><thead><tr><th>cause</th><th>failures'
        f"</th></tr></thead><tbody>{causes}</tbody></table>"
        '<table class="sortable"><thead><tr><th>mechanism</th><th>in words</th>'
        f"<th>failures</th></tr></thead><tbody>{mechanisms}</tbody></table></div></section>"
    )


_DRILL = (
    '<section id="cases"><h2>Failures and cases</h2>'
    '<div class="filters" role="search">'
    '<label>Probe <select id="f-probe"><option value="">all</option></select></label>'
    '<label>Outcome <select id="f-outcome"><option value="">all</option></select></label>'
    '<label>Cause <select id="f-cause"><option value="">all</option></select></label>'
    '<label>Tag <select id="f-tag"><option value="">all</option></select></label>'
    '<label>Search <input id="f-search" type="search" placeholder="question, answer, id  (/)">'
    '</label><span id="f-count" aria-live="polite"></span></div>'
    '<table id="units" class="sortable-js"><thead><tr>'
    '<th data-key="probe" tabindex="0">probe</th><th data-key="group" tabindex="0">group</th>'
    '<th data-key="outcome" tabindex="0">outcome</th><th data-key="cause" tabindex="0">cause'
    '</th><th data-key="mech" tabindex="0">mechanism</th><th data-key="q" tabindex="0">'
    "question</th></tr></thead><tbody></tbody></table>"
    '<button type="button" id="more" hidden>Show more</button>'
    '<div id="detail" tabindex="-1" aria-live="polite"></div>'
    "<noscript>The drill-down needs JavaScript; every case is in run.json.</noscript></section>"
)


def _meta(run: RunLog) -> str:
    return (
        f'<p class="meta">ProbeGuard {esc(run.probeguard_version)}; pipeline '
        f"{esc(run.pipeline_name)} (fingerprint <code>{esc(run.pipeline_fingerprint[:12])}"
        f"</code>); corpus <code>{esc((run.corpus_fingerprint or 'n/a')[:12])}</code>; "
        f"seed {run.seed}. Full data: run.json beside this file.</p>"
    )


def render_html(run: RunLog, verified: FixArtifact | None = None) -> str:
    """The whole page (rules in the module doc)."""
    verdict = verdict_line(run)
    status = verdict.split(":", 1)[0].lower().replace(" ", "-")
    gate = gate_section(run)
    header = (
        "<h1>ProbeGuard scan report</h1>"
        f'<p id="verdict" class="verdict {esc(status)}">{esc(verdict)}</p>'
        '<nav><a href="#scorecard">Scorecard</a> <a href="#probes">Probes</a> '
        '<a href="#fixes">Fixes</a> '
        + ('<a href="#gate">Gate</a> ' if gate else "")
        + '<a href="#causes">Causes</a> <a href="#cases">Cases</a></nav>'
    )
    main = (
        _scorecard(run)
        + _probes(run)
        + _fixes(run, verified)
        + gate
        + _causes(run)
        + _DRILL
        + _meta(run)
    )
    title = f"ProbeGuard report: {run.pipeline_name}"
    return html_page(title, header, main, packed(report_data(run)))

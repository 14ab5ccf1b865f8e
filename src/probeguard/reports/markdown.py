"""The Markdown report: a pure function of the run log (``results.run.RunLog``).

It holds nothing that changes between two runs of the same scan (no timings, no call
counts, no timestamps), so the same inputs and seed give a byte-identical report; execution
statistics live in ``run.json``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from probeguard.core.mechanisms import describe
from probeguard.core.records import CaseRecord
from probeguard.metrics.fcs import EmpiricalFCS
from probeguard.metrics.golden import GoldenStandardSummary, GoldenVerdict
from probeguard.probes.models import SkippedProbe
from probeguard.reports.escape import format_estimate, md_inline
from probeguard.reports.eval_markdown import metrics_table, unsupported_claim_lines
from probeguard.reports.lead import first_fixes
from probeguard.reports.markdown_lead import lead_section
from probeguard.results.fix import FixArtifact
from probeguard.results.run import RunLog

GOLDEN_ROWS = [
    ("retrieval_hit_at_k", "Retrieval hit@k (a gold document in the top-k)"),
    ("retrieval_all_evidence", "All gold documents retrieved (multi-hop)"),
    ("mrr", "MRR of the first gold document"),
    ("answer_contains", "Answer contains a gold answer"),
    ("false_refusal", "Refused an answerable question"),
    ("abstention", "Refused an unanswerable question (should be high)"),
    ("pass_rate", "Passed overall"),
]


def _mark(flag: Any) -> str:
    return "yes" if flag is True else "no" if flag is False else "–"


def _case_row(record: CaseRecord, v: GoldenVerdict | None) -> str:
    case = record.case
    if record.output is None:
        err = record.error
        status = f"ERROR {md_inline(err.type if err else '?', 60)}"
        answer = md_inline(err.message if err else "", 100)
    else:
        status = "pass" if v is not None and v.passed else "FAIL"
        answer = md_inline(record.output.answer, 120)
    rank = v.evidence_rank if v is not None else None
    return (
        f"| {md_inline(case.id, 40)} | {status} | {md_inline(case.question, 100)} | "
        f"{'–' if rank is None else rank} | {_mark(v.contains if v else None)} | "
        f"{_mark(v.refused if v else None)} | {answer} |"
    )


def _probe_sections(run: RunLog) -> list[str]:
    probes = run.summary.probes
    if not probes:
        return []
    fcs = run.summary.fcs
    fcs_value, union_rate, interpretation, recommendation = (
        (fcs.value, fcs.adversarial_failure_rate, fcs.interpretation, fcs.recommendation)
        if fcs is not None
        else (math.nan, math.nan, "", "")
    )
    standard = run.summary.standard_eval
    measure, threshold, rate = (
        (standard.measure, standard.threshold, standard.failure_rate)
        if standard is not None
        else (None, None, None)
    )
    lines = [
        "",
        "## Failure coverage",
        "",
        *_empirical_lines(fcs.empirical if fcs is not None else None),
        f"- **FCS (seed formula, independence union): "
        f"{'n/a' if math.isnan(fcs_value) else f'{fcs_value:.3f}'}** — "
        f"{md_inline(interpretation, None)} (FCS = [1 − Π(1 − r·(1 − w))] / [1 − Π(1 − r)] over "
        "the probes' failure rates r and overlap weights w; it saturates when one probe fails "
        "on almost every question.)",
        f"- Overall adversarial failure rate: {adversarial_rate(run, union_rate)}",
        f"- Standard-evaluation failure rate ({md_inline(str(measure))} < "
        f"{threshold}): {format_estimate(rate)}",
        f"- Recommendation: {md_inline(recommendation, None)}",
        "",
        "## Probes",
        "",
        "| probe | failure rate [95% CI] (n) | unscored | overlap weight | looks for |",
        "|---|---|---|---|---|",
    ]
    for name, s in probes.items():
        if isinstance(s, SkippedProbe):
            lines.append(f"| {md_inline(name)} | skipped | – | – | {md_inline(s.skipped, None)} |")
            continue
        shown = (
            format_estimate(s.failure_rate)
            if s.failure_rate.n
            else f"not run: {md_inline(not_run_reason(s.groups, s.unscored), None)}"
        )
        lines.append(
            f"| {md_inline(name)} | {shown} | {s.unscored} | "
            f"{s.overlap_weight:.2f} | {md_inline(s.goal, 120)} |"
        )
    for name, s in probes.items():
        extra = {} if isinstance(s, SkippedProbe) else s.own
        failed = [g for g in run.groups if g.probe == name and g.failed]
        if not extra and not failed:
            continue
        lines += ["", f"### {md_inline(name)}", ""]
        for key, value in extra.items():
            lines += _bullets(key, value)
        if failed:
            questions = {r.case.id: r.case.question for r in run.records}
            lines += [
                "",
                f"{len(failed)} failed groups (first 20):",
                "",
                "| group | question | evidence |",
                "|---|---|---|",
            ]
            for g in failed[:20]:
                question = next((questions[c] for c in g.case_ids if c in questions), "")
                lines.append(
                    f"| {md_inline(g.group, 40)} | {md_inline(question, 90)} | "
                    f"{_evidence(g.evidence)} |"
                )
    return lines


def not_run_reason(groups: int, unscored: int) -> str:
    """Why a probe measured nothing (n = 0): every group unscored, or no case generated."""
    if groups:
        return f"all {groups} groups unscored (see the probe's evidence)"
    return "no cases from these inputs (it needs golden questions or attack cases it can use)"


def adversarial_rate(run: RunLog, union_rate: float) -> str:
    """The union failure rate, or why there is none: never a rate when no probe measured a
    case (that would read as safe)."""
    measured = [
        s
        for s in (run.summary.probes or {}).values()
        if not isinstance(s, SkippedProbe) and s.failure_rate.n
    ]
    if not measured or math.isnan(union_rate):
        return "not measured (no probe judged a case)"
    return f"{union_rate:.3f}"


def _synthesized_lines(run: RunLog) -> list[str]:
    synth = run.synthesized
    if synth is None:
        return []
    return [
        f"- Golden questions: none given; {synth.golden} golden questions and "
        f"{synth.attacks} attack cases synthesized from the corpus ({md_inline(synth.generator)}, "
        f"seed {synth.seed})"
    ]


def _empirical_lines(empirical: EmpiricalFCS | None) -> list[str]:
    """The empirical FCS first: the share of failing golden questions only a probe caught."""
    if empirical is None:
        return []
    apart = empirical.failed_groups_without_question
    unscored = empirical.unscored_questions
    return [
        f"- **Empirical FCS: {format_estimate(empirical.value)}** — share of the golden "
        "questions failing anything (standard evaluation or a probe) that fail some probe "
        f"while passing standard evaluation. {md_inline(empirical.interpretation, None)}"
        + (f" {unscored} errored golden questions left out." if unscored else "")
        + (f" {apart} failed probe groups are about no golden question." if apart else ""),
    ]


def _is_estimate(value: Any) -> bool:
    return isinstance(value, dict) and {"value", "low", "high", "n"} <= set(value)


def _is_breakdown(value: Any) -> bool:
    """A mapping of rows (styles, kinds, types) each holding estimates: shown as a table."""
    return (
        isinstance(value, dict)
        and bool(value)
        and not _is_estimate(value)
        and all(
            isinstance(row, dict) and any(_is_estimate(v) for v in row.values())
            for row in value.values()
        )
    )


def _breakdown_table(key: str, rows: dict[str, dict[str, Any]]) -> list[str]:
    """One row per entry, one column per estimate or scalar field (first-seen order);
    nested mappings (histograms, outcome counts) compacted into one cell."""
    columns: list[str] = []
    for row in rows.values():
        columns += [c for c in row if c not in columns]
    lines = [
        f"- {md_inline(key)}:",
        "",
        "  | " + " | ".join([md_inline(key), *(md_inline(c) for c in columns)]) + " |",
        "  |" + "---|" * (len(columns) + 1),
    ]
    for name, row in rows.items():
        cells = ["–" if c not in row else _value(row[c]) for c in columns]
        lines.append("  | " + " | ".join([md_inline(str(name), 40), *cells]) + " |")
    return lines + [""]


def _bullets(key: str, value: Any, depth: int = 0) -> list[str]:
    """A summary entry as nested bullets: estimates and scalars inline, mappings and lists of
    mappings one level deeper (configs are left to run.json); a breakdown (rows of
    estimates, e.g. per style) at the top level as a table."""
    pad = "  " * depth
    if depth == 0 and _is_breakdown(value):
        return _breakdown_table(key, value)
    if isinstance(value, dict) and not _is_estimate(value) and depth < 2:
        out = [f"{pad}- {md_inline(key)}:"]
        for sub, v in value.items():
            out += _bullets(str(sub), v, depth + 1)
        return out
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value) and depth < 2:
        out = [f"{pad}- {md_inline(key)}:"]
        for item in value:
            label = next((str(v) for v in item.values() if isinstance(v, str)), "")
            fields = "; ".join(
                f"{md_inline(k)} {_value(v)}"
                for k, v in item.items()
                if _is_estimate(v) or isinstance(v, (int, float, bool))
            )
            out.append(f"{pad}  - {md_inline(label, 60)}: {fields}")
        return out
    return [f"{pad}- {md_inline(key)}: {_value(value)}"]


def _value(value: Any) -> str:
    if isinstance(value, dict) and {"value", "low", "high", "n"} <= set(value):
        return format_estimate(value)
    if isinstance(value, dict):
        return "; ".join(f"{md_inline(str(k), 40)}: {_value(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(_value(v) for v in value) or "–"
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.3f}"
    return md_inline(str(value), 200)


def _evidence(evidence: dict[str, Any]) -> str:
    """Scalar evidence fields, compact and escaped (the full evidence is in run.json); a
    float to 4 significant digits, so the report a scan writes and the one re-rendered from
    run.json (floats kept to ``core.floats.LOG_DIGITS``) are the same bytes."""
    parts = []
    for key, value in evidence.items():
        if isinstance(value, bool) or value is None:
            parts.append(f"{key}={_mark(value)}")  # yes / no / –, never a Python repr
        elif isinstance(value, float):
            parts.append(f"{key}={'n/a' if math.isnan(value) else f'{value:.4g}'}")
        elif isinstance(value, (str, int)):
            parts.append(f"{key}={value}")
    return md_inline("; ".join(parts), 240)


def _standard_section(
    standard: GoldenStandardSummary, golden: Sequence[tuple[CaseRecord, GoldenVerdict | None]]
) -> list[str]:
    """The standard metrics of the golden questions and their unsupported claims."""

    judge = standard.judge
    lines = [
        "",
        "### Standard metrics",
        "",
        f"{standard.records} answerable golden cases scored (claim judge "
        f"{md_inline(str(judge.get('claims', '?')), 60)}, relevance "
        f"{md_inline(str(judge.get('relevance', '?')), 40)}). Means with percentile-"
        "bootstrap 95% intervals; unscored cases (nothing to score) are left out, never "
        "counted as 0.",
        "",
    ]
    lines += metrics_table(standard.metrics, standard.thresholds.checks)
    claims = unsupported_claim_lines(
        (r.case.id, r.case.question, v.standard.claims)
        for r, v in golden
        if v is not None and v.standard is not None
    )
    lines += ["", "### Unsupported claims", ""]
    lines += (
        ["Answer claims the retrieved chunks do not support, with what the context says.", ""]
        + claims
        if claims
        else ["Every judged answer claim is supported."]
    )
    return lines


def _mechanism_lines(mechanisms: Mapping[str, int], contributing: Mapping[str, int]) -> list[str]:
    """The failures per mechanism (in words) and per contributing cause, when any."""
    lines: list[str] = []
    if mechanisms:
        lines += ["", "| mechanism | failures |", "|---|---|"]
        lines += [f"| {md_inline(describe(m), 80)} | {n} |" for m, n in mechanisms.items()]
    if contributing:
        lines += [
            "",
            "Contributing causes (beside the primary cause): "
            + ", ".join(f"{md_inline(c)} {n}" for c, n in contributing.items())
            + ".",
        ]
    return lines


def _cause_by_probe(run: RunLog, causes: list[str]) -> list[str]:
    """Failures per probe (rows, first-seen order) and cause (columns): which component
    breaks where — what the lead's cause totals and fixes do not say."""
    counts: dict[str, dict[str, int]] = {}
    for a in run.attribution:
        row = counts.setdefault(a.probe, {})
        row[a.cause] = row.get(a.cause, 0) + 1
    if not counts:
        return []
    lines = [
        "",
        "### Causes per probe",
        "",
        "| probe | " + " | ".join(md_inline(c) for c in causes) + " |",
        "|---" * (len(causes) + 1) + "|",
    ]
    for probe, row in counts.items():
        cells = " | ".join(str(row.get(c, 0)) for c in causes)
        lines.append(f"| {md_inline(probe)} | {cells} |")
    return lines


def _more_fixes(run: RunLog) -> list[str]:
    """The fixes after the lead's (``lead.first_fixes``), so none is listed twice."""
    summary = run.summary.attribution
    fixes = [] if summary is None else summary.top_fixes[len(first_fixes(run)) :]
    if not fixes:
        return []
    lines = [
        "",
        "### More fixes (after the top fixes above)",
        "",
        "| failures | cause | fix | reference config | other pipelines |",
        "|---|---|---|---|---|",
    ]
    for f in fixes:
        patch = "; ".join(f"{k} = {_setting(v)}" for k, v in f.config_patch.items())
        lines.append(
            f"| {f.cases} | {md_inline(f.cause)} | "
            f"{md_inline(f.title, 80)} | {md_inline(patch, 160)} | "
            f"{md_inline(f.other_pipelines, 160)} |"
        )
    return lines


def _causes_section(run: RunLog) -> list[str]:
    """Attribution: counts per cause and mechanism, failures per probe and cause, the fixes
    the lead leaves out, and one compact row per failure."""
    summary = run.summary.attribution
    if summary is None:
        return []
    lines = [
        "",
        "## Causes",
        "",
        f"{summary.attributed} of {summary.failures} failures attributed "
        f"by counterfactual re-runs ({summary.skipped} over the cap of "
        f"{summary.max_cases}). Cause = the component whose single swap repairs "
        "the failure (decision table in `probeguard.attribution.decide`).",
        "",
        "| cause | failures |",
        "|---|---|",
    ]
    lines += [f"| {md_inline(c)} | {n} |" for c, n in summary.causes.items()]
    lines += _mechanism_lines(summary.mechanisms or {}, summary.contributing or {})
    lines += _cause_by_probe(run, list(summary.causes))
    lines += _more_fixes(run)
    if run.attribution:
        lines += [
            "",
            "### Attributed failures",
            "",
            "| probe | group | cause | mechanism | also | repaired by | reason |",
            "|---|---|---|---|---|---|---|",
        ]
        for a in run.attribution:
            repaired = ", ".join(s.swap for s in a.swaps if s.outcome == "repaired") or "–"
            mechanism = a.mechanism_words or (describe(a.mechanism) if a.mechanism else "–")
            if a.contributing:
                mechanism += "; contributing: " + ", ".join(
                    f"{c['cause']} ({c['words']})" for c in a.contributing
                )
            lines.append(
                f"| {md_inline(a.probe)} | {md_inline(a.group, 40)} | "
                f"{md_inline(a.cause)} | {md_inline(mechanism, 120)} | "
                f"{md_inline(', '.join(a.also) or '–', 60)} | "
                f"{md_inline(repaired, 80)} | {md_inline(a.reason, 160)} |"
            )
    return lines


def _setting(value: Any) -> str:
    """A config value as the config file would spell it: a component as ``name (k=v, …)``,
    a mapping as ``k=v, …``, a scalar as JSON (no Python reprs)."""
    if isinstance(value, dict):
        rest = ", ".join(f"{k}={_setting(v)}" for k, v in value.items() if k != "name")
        if "name" in value:
            return f"{value['name']} ({rest})" if rest else str(value["name"])
        return rest or "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_setting(v) for v in value) + "]"
    return value if isinstance(value, str) else json.dumps(value)


def render_markdown(run: RunLog, verified: FixArtifact | None = None) -> str:
    """``report.md``: the verdict, worst probes and top fixes first
    (``reports.markdown_lead``), then the run, failure coverage, probes, causes and golden
    questions. ``verified`` is the run's ``fix.json`` when ``probeguard fix`` has run."""
    cfg = run.config.get("pipeline", {})
    lines = [
        "# ProbeGuard scan report",
        "",
        *lead_section(run, verified),
        "",
        "## Run",
        "",
        f"- ProbeGuard {md_inline(run.probeguard_version)}, run log version {run.version}",
        # No code span around escaped text: inside one, the escapes would show as backslashes
        # (``my\_rag``) and an escaped backtick would still close the span.
        f"- Pipeline: {md_inline(run.pipeline_name, 60)} (fingerprint `{run.pipeline_fingerprint[:12]}`)",
        f"- Corpus fingerprint: `{(run.corpus_fingerprint or 'n/a')[:12]}`; seed {run.seed}",
    ]
    if cfg.get("type") == "reference":
        ref = cfg.get("reference", {})
        parts = ", ".join(
            f"{k}: {md_inline(_setting(ref.get(k)), 80)}"
            for k in (
                "chunker",
                "embedder",
                "retriever",
                "top_k",
                "reranker",
                "generator",
                "prompt",
            )
        )
        lines.append(f"- Reference pipeline: {parts}")
    lines += _synthesized_lines(run)
    lines += _probe_sections(run)
    lines += _causes_section(run)
    golden = run.summary.golden
    if golden:
        lines += [
            "",
            "## Golden questions",
            "",
            f"{golden.cases} cases, {golden.errors} errors. "
            "Rates with Wilson 95% intervals; MRR with a bootstrap interval.",
            "",
            "| metric | value [95% CI] (n) |",
            "|---|---|",
        ]
        lines += [
            f"| {label} | {format_estimate(getattr(golden, key))} |" for key, label in GOLDEN_ROWS
        ]
        verdicts = run.golden_verdicts()
        failed = [r for r, v in verdicts if not (v is not None and v.passed)]
        lines += [
            "",
            "### Cases",
            "",
            f"{len(failed)} of {len(verdicts)} cases failed or errored.",
            "",
            "| case | result | question | gold rank | contains | refused | answer |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += [_case_row(r, v) for r, v in verdicts]
        if golden.standard:
            lines += _standard_section(golden.standard, verdicts)
    lines.append("")
    return "\n".join(lines)

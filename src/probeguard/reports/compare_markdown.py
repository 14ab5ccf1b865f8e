"""``compare.md`` and the GitHub step summary: pure functions of a ``CompareArtifact``.

The step summary is the report's head (verdict, failed checks, the probe and golden table,
the new failures), short enough for ``$GITHUB_STEP_SUMMARY``; ``compare.md`` adds every
check, the tag and attack-type slices and both runs' evidence for each changed unit.
"""

from __future__ import annotations

import json
import math
from typing import Any

from probeguard.reports.escape import md_inline
from probeguard.results.compare import (
    CompareArtifact,
    GateCheck,
    GateOutcome,
    SliceComparison,
    UnitChange,
)

__all__ = ["compare_markdown", "gate_summary", "step_summary"]

_VERDICT = {"pass": "PASS", "fail": "FAIL", "incomplete": "INCOMPLETE (run errors)"}
_SUMMARY_CHANGES = 20


def step_summary(artifact: CompareArtifact) -> str:
    """The short Markdown for a CI job's summary page."""
    lines = _head(artifact)
    lines += _failed_checks(artifact.gate.checks)
    lines += _slice_table(artifact.slices, ("probe", "golden"))
    news = [c for c in artifact.changes if c.change == "new_failure"]
    if news:
        lines += ["", f"New failures ({len(news)}):", ""]
        lines += [
            f"- {md_inline(c.unit, 80)} ({md_inline(', '.join(c.slices), 200)}): {md_inline(c.question, 120)}"
            for c in news[:_SUMMARY_CHANGES]
        ]
        if len(news) > _SUMMARY_CHANGES:
            lines.append(f"- … and {len(news) - _SUMMARY_CHANGES} more (compare.md)")
    return "\n".join(lines) + "\n"


def gate_summary(gate: GateOutcome, run: str) -> str:
    """The step summary of a gate applied to one run without a baseline (``scan --gate``)."""
    lines = [
        f"# ProbeGuard release gate: {_VERDICT[gate.status]} (exit {gate.exit_code})",
        "",
        f"- run: {md_inline(run, 200)} (no baseline: rate limits and completeness only)",
    ]
    return "\n".join(lines + _failed_checks(gate.checks)) + "\n"


def compare_markdown(artifact: CompareArtifact) -> str:
    """The full comparison report (module doc)."""
    lines = _head(artifact)
    lines += ["", "## Checks", "", "| check | result | detail |", "|---|---|---|"]
    lines += [
        f"| {md_inline(c.id, 100)} | {'pass' if c.passed else '**FAIL**'} | "
        f"{md_inline(c.message, 400)} |"
        for c in artifact.gate.checks
    ]
    lines += _slice_table(artifact.slices, ("probe", "golden"), title="## Probes and golden checks")
    lines += _slice_table(artifact.slices, ("attack_type",), title="## Attack types")
    lines += _slice_table(artifact.slices, ("tag",), title="## Tags")
    for change in ("new_failure", "fixed"):
        units = [c for c in artifact.changes if c.change == change]
        title = "New failures" if change == "new_failure" else "Fixed"
        lines += ["", f"## {title} ({len(units)})"]
        for unit in units:
            lines += _unit_block(unit)
    return "\n".join(lines) + "\n"


def _head(artifact: CompareArtifact) -> list[str]:
    gate, b, c = artifact.gate, artifact.baseline, artifact.candidate
    lines = [
        f"# ProbeGuard release gate: {_VERDICT[gate.status]} (exit {gate.exit_code})",
        "",
        f"- baseline: {md_inline(b.path, 200)} ({md_inline(b.pipeline_name, 60)}, "
        f"{b.cases} cases, {b.errors} errors)",
        f"- candidate: {md_inline(c.path, 200)} ({md_inline(c.pipeline_name, 60)}, "
        f"{c.cases} cases, {c.errors} errors)",
        f"- alpha {gate.policy.alpha:g} (Holm within each kind of slice), power "
        f"{gate.policy.power:g} for the smallest detectable difference",
    ]
    lines += [f"- note: {md_inline(n, 300)}" for n in artifact.notes]
    return lines


def _failed_checks(checks: list[GateCheck]) -> list[str]:
    failed = [c for c in checks if not c.passed]
    if not failed:
        return ["", f"All {len(checks)} checks pass."]
    lines = ["", f"Failed checks ({len(failed)} of {len(checks)}):", ""]
    return lines + [f"- {md_inline(c.id, 100)}: {md_inline(c.message, 400)}" for c in failed]


def _slice_table(
    slices: list[SliceComparison], kinds: tuple[str, ...], title: str | None = None
) -> list[str]:
    rows = [s for s in slices if s.kind in kinds]
    if not rows:
        return []
    lines = ["", title, ""] if title else [""]
    lines += [
        "| slice | paired | baseline | candidate | difference [95% CI] | new failures | fixed "
        "| still failing | p (Holm) | smallest detectable |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in rows:
        c, d = s.counts, s.difference
        diff = "n/a" if not d.defined else f"{d.value:+.3f} [{d.low:+.3f}, {d.high:+.3f}]"
        lines.append(
            f"| {md_inline(s.slice, 80)} | {c.paired} | {_num(s.baseline_rate.value)} | "
            f"{_num(s.candidate_rate.value)} | {diff} | {c.new_failures} | {c.fixed} | "
            f"{c.still_failing} | {_p(s.p_adjusted)} | {_num(s.mdd)} |"
        )
    return lines


def _unit_block(unit: UnitChange) -> list[str]:
    return [
        "",
        f"### {md_inline(unit.unit, 100)} ({md_inline(', '.join(unit.slices), 200)})",
        "",
        f"Question: {md_inline(unit.question, 300)}",
        "",
        f"- baseline: {_evidence(unit.baseline)}",
        f"- candidate: {_evidence(unit.candidate)}",
    ]


def _evidence(fields: dict[str, Any]) -> str:
    if not fields:
        return "(no evidence)"
    return "; ".join(
        f"{md_inline(k, 60)} = {md_inline(json.dumps(v, ensure_ascii=False), 200)}"
        for k, v in fields.items()
    )


def _num(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3f}"


def _p(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3g}"

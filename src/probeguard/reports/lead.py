"""What every scan report shows first, in plain text: the verdict in one line, the worst
probes with their intervals, and the top fixes as complete config patches with their verified
effect. ``reports.markdown`` and ``reports.html`` escape these strings for their format.

Rules:

- Verdict: ``FAIL`` when any probe group or golden question failed, or a standard metric is
  below its threshold; else ``PASS`` when something was judged; else ``NOT JUDGED``. The line
  counts failed probe groups (over judged groups) and failed golden questions (over all,
  errors counted as failures, as in ``pass_rate``), names the worst probe, the most frequent
  cause and the first fix.
- Worst probes: by failure rate, highest first (ties by the interval's lower bound, then by
  name); probes with an undefined rate (nothing judged) and skipped probes are left out.
- A fix's verified effect: the ``fix.json`` entry (``probeguard fix``) whose config patch is
  the top fix's, when ``RUN_DIR/fix/fix.json`` exists.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from probeguard.attribution.summary import TopFix
from probeguard.core.estimate import Estimate
from probeguard.probes.models import ProbeRunSummary
from probeguard.results.fix import FixArtifact, FixEntry
from probeguard.results.run import RunLog

__all__ = [
    "effect_line",
    "first_fixes",
    "fix_effect",
    "patch_flags",
    "patch_yaml",
    "probe_rate_text",
    "verdict_line",
    "worst_probes",
]


def worst_probes(run: RunLog, limit: int | None = 3) -> list[tuple[str, Estimate]]:
    """The probes with a defined failure rate, worst first (rule in the module doc)."""
    rated = [
        (name, s.failure_rate)
        for name, s in (run.summary.probes or {}).items()
        if isinstance(s, ProbeRunSummary) and s.failure_rate.defined
    ]
    rated.sort(key=lambda item: (-item[1].value, -item[1].low, item[0]))
    return rated if limit is None else rated[:limit]


def _golden_counts(run: RunLog) -> tuple[int, int]:
    """(failed or errored golden questions, golden questions)."""
    verdicts = run.golden_verdicts()
    failed = sum(1 for _, v in verdicts if not (v is not None and v.passed))
    return failed, len(verdicts)


def _threshold_failures(run: RunLog) -> list[str]:
    golden = run.summary.golden
    if golden is None or golden.standard is None:
        return []
    return list(golden.standard.thresholds.failed)


def verdict_line(run: RunLog) -> str:
    """The scan's verdict in one line of plain text (rule in the module doc)."""
    judged = [g for g in run.groups if g.failed is not None]
    failed_groups = sum(1 for g in judged if g.failed)
    failed_golden, golden = _golden_counts(run)
    below = _threshold_failures(run)
    if not judged and not golden:
        return "NOT JUDGED: no probe group or golden question was scored."
    parts = [f"{failed_groups} of {len(judged)} probe groups failed"]
    if golden:
        parts.append(f"{failed_golden} of {golden} golden questions failed")
    if below:
        parts.append("below threshold: " + ", ".join(below))
    if not (failed_groups or failed_golden or below):
        return "PASS: " + "; ".join(parts) + "."
    worst = worst_probes(run, 1)
    if worst:
        parts.append(f"worst probe {worst[0][0]} {worst[0][1].format(3)}")
    attribution = run.summary.attribution
    if attribution is not None and attribution.attributed:
        cause, count = max(attribution.causes.items(), key=lambda kv: kv[1])
        parts.append(f"most failures from the {cause} ({count} of {attribution.attributed})")
        if attribution.top_fixes:
            parts.append(f"first fix: {attribution.top_fixes[0].title}")
    return "FAIL: " + "; ".join(parts) + "."


def _nest(patch: Mapping[str, Any]) -> dict[str, Any]:
    """Dotted paths → nested mappings (``a.b: 1`` → ``{a: {b: 1}}``), in the patch's order."""
    root: dict[str, Any] = {}
    for path, value in patch.items():
        node = root
        *parents, leaf = path.split(".")
        for key in parents:
            child = node.setdefault(key, {})
            if not isinstance(child, dict):  # a value and a deeper path collide: keep both
                child = node[key] = {}
            node = child
        node[leaf] = value
    return root


def patch_yaml(patch: Mapping[str, Any]) -> str:
    """A config patch (dotted path → value) as the complete YAML fragment to merge into a
    config file, keys in the patch's order."""
    text: str = yaml.safe_dump(_nest(patch), sort_keys=False, default_flow_style=False)
    return text


def patch_flags(patch: Mapping[str, Any]) -> str:
    """The patch as ``probeguard fix`` options (``--patch 'PATH=VALUE'``, VALUE as JSON, which
    is YAML flow style), single-quoted for a POSIX shell, to verify it on the scanned run."""
    flags = []
    for path, value in patch.items():
        flow = json.dumps(value, ensure_ascii=False)  # JSON is YAML flow style
        quoted = f"{path}={flow}".replace("'", "'\\''")  # POSIX shell single quotes
        flags.append(f"--patch '{quoted}'")
    return " ".join(flags)


def fix_effect(fix: TopFix, verified: FixArtifact | None) -> FixEntry | None:
    """The ``fix.json`` entry with the same config patch as ``fix`` (None without one)."""
    if verified is None:
        return None
    return next((e for e in verified.fixes if e.config_patch == fix.config_patch), None)


def _arrow(before: Estimate, after: Estimate) -> str:
    return f"{before.format(3)} -> {after.format(3)}"


def effect_line(entry: FixEntry) -> str:
    """A verified fix's effect in one line: its verdict, the targeted failures' rate and the
    false-refusal rate before -> after, or why it was not measured."""
    if entry.targeted is None:
        return f"{entry.verdict}: {entry.reason}"
    t = entry.targeted
    parts = [
        f"{entry.verdict}: targeted failures {_arrow(t.before, t.after)} "
        f"({t.repaired} of {t.n} repaired)"
    ]
    if entry.benign is not None:
        refusals = entry.benign.false_refusal
        parts.append(f"false refusals {_arrow(refusals.before, refusals.after)}")
    return "; ".join(parts)


def probe_rate_text(rate: Estimate) -> str:
    """A failure rate with its interval, or ``n/a`` when undefined."""
    return rate.format(3) if rate.defined and not math.isnan(rate.low) else f"n/a (n={rate.n})"


def first_fixes(run: RunLog, limit: int = 3) -> Sequence[TopFix]:
    """The ``limit`` most frequent fixes (``summary.attribution.top_fixes``)."""
    attribution = run.summary.attribution
    return [] if attribution is None else attribution.top_fixes[:limit]

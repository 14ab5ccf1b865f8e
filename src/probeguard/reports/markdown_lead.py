"""The first screen of ``report.md``: the verdict in one line, the worst probes with their
intervals, and the top three fixes with their complete config patches and verified effect
(rules in ``reports.lead``). Details follow it in ``reports.markdown``."""

from __future__ import annotations

from probeguard.attribution.summary import TopFix
from probeguard.reports.escape import md_code_block, md_inline
from probeguard.reports.lead import (
    effect_line,
    first_fixes,
    fix_effect,
    patch_flags,
    patch_yaml,
    probe_rate_text,
    verdict_line,
    worst_probes,
)
from probeguard.results.fix import FixArtifact
from probeguard.results.run import RunLog

__all__ = ["lead_section"]


def _worst_lines(run: RunLog) -> list[str]:
    worst = worst_probes(run)
    if not worst:
        return []
    lines = ["", "## Worst probes", "", "| probe | failure rate [95% CI] (n) |", "|---|---|"]
    lines += [f"| {md_inline(name)} | {probe_rate_text(rate)} |" for name, rate in worst]
    return lines


def _fix_lines(rank: int, fix: TopFix, verified: FixArtifact | None) -> list[str]:
    entry = fix_effect(fix, verified)
    effect = (
        # a measured effect is a verdict id and numbers only (kept readable, as the tables'
        # estimates are); an unmeasured one carries a reason, which is escaped
        (
            effect_line(entry)
            if entry.measured
            else f"{entry.verdict}: {md_inline(entry.reason or '', None)}"
        )
        if entry is not None
        else "not verified yet: `probeguard fix RUN_DIR` re-runs the targeted failures and "
        "the benign controls with the patch (fix.json)"
    )
    return [
        "",
        f"### {rank}. {md_inline(fix.title, None)}",
        "",
        f"{fix.cases} attributed failures, cause {md_inline(fix.cause)}: "
        f"{md_inline(fix.why, None)}.",
        "",
        "Config patch (merge into the scan's config file):",
        "",
        md_code_block(patch_yaml(fix.config_patch), "yaml"),
        "",
        "The same patch on the command line (`probeguard fix RUN_DIR` options):",
        "",
        md_code_block(patch_flags(fix.config_patch), "sh"),
        "",
        f"- Verified effect: {effect}",
        f"- Other pipelines: {md_inline(fix.other_pipelines, None)}",
    ]


def lead_section(run: RunLog, verified: FixArtifact | None = None) -> list[str]:
    """The report's first lines: verdict, worst probes, top three fixes."""
    lines = [f"**{md_inline(verdict_line(run), None)}**"]
    lines += _worst_lines(run)
    fixes = first_fixes(run)
    if fixes:
        lines += ["", "## Top fixes"]
        for rank, fix in enumerate(fixes, 1):
            lines += _fix_lines(rank, fix, verified)
    return lines

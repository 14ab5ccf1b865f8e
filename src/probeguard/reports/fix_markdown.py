"""The ``probeguard fix`` report (``fix.md``): a pure function of ``fix.json``'s model
(``results.fix.FixArtifact``).

Every text that comes from a run (titles, patches, group ids, sentences) goes through
``reports.escape.md_inline``. Nothing that varies between two runs (no timings, no paths, no
call counts) is shown, so the same run gives a byte-identical report.

Layout: a summary table, one row per fix — the targeted failures' failure rate before → after,
the re-run probes' failure rate over all their groups, the benign controls' false-refusal
rate with the new false refusals, the golden answer-contains rate, and the verdict — then
one section per fix with its patch, the reason for its verdict, per-probe numbers and the
ids of new false refusals and new failures.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from probeguard.core.estimate import Estimate
from probeguard.reports.escape import md_inline
from probeguard.results.fix import BeforeAfter, FixArtifact, FixEntry, TargetTally

__all__ = ["fix_table", "render_fix_markdown", "short_estimate"]

_LIST_LIMIT = 20


def short_estimate(est: Estimate | None) -> str:
    """``0.49 [0.37, 0.61]``; ``n/a`` when undefined."""
    if est is None or not est.defined:
        return "n/a"
    return f"{est.value:.2f} [{est.low:.2f}, {est.high:.2f}]"


def _arrow(pair: BeforeAfter | None, n: bool = True) -> str:
    if pair is None:
        return "–"
    text = f"{short_estimate(pair.before)} → {short_estimate(pair.after)}"
    return f"{text} (n={pair.after.n})" if n else text


def _patch_text(patch: Mapping[str, Any]) -> str:
    text = "; ".join(
        f"{k.removeprefix('pipeline.reference.')}: {json.dumps(v, sort_keys=True)}"
        for k, v in sorted(patch.items())
    )
    return md_inline(text, max_len=200)


def _probe_rate(fix: FixEntry) -> str:
    """Failure rate of the targeted probes (the benign controls and golden aside)."""
    controls = set(fix.benign.probes) if fix.benign is not None else set()
    parts = []
    for name, row in (fix.probes or {}).items():
        if name in controls and not any(t.probe == name for t in fix.targets):
            continue
        parts.append(f"{md_inline(name)} {_arrow(row.failure_rate, n=False)}")
    return "<br>".join(parts) or "–"


def fix_table(fixes: Sequence[FixEntry]) -> list[str]:
    """The summary table's lines."""
    lines = [
        "| fix | change (pipeline.reference.…) | targeted failure rate before → after | "
        "probe failure rate (all groups) | false refusal on benign controls (new) | "
        "golden answer contains | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in fixes:
        if f.targeted is not None and f.benign is not None and f.golden is not None:
            t = f.targeted
            targeted = (
                f"{short_estimate(t.before)} → {short_estimate(t.after)} "
                f"({t.repaired}/{t.n} repaired)"
            )
            b = f.benign
            benign = (
                f"{_arrow(b.false_refusal, n=False)} (n={b.n}; {len(b.new_false_refusals)} new)"
            )
            golden = _arrow(f.golden.answer_contains, n=False)
            probes = _probe_rate(f)
        else:
            targeted = f"{len(f.targets)} targeted; not run"
            benign = golden = probes = "–"
        lines.append(
            f"| {md_inline(f.id)} {md_inline(f.title)} | "
            f"{_patch_text(f.config_patch)} | {targeted} | {probes} | {benign} | "
            f"{golden} | **{md_inline(f.verdict)}** |"
        )
    return lines


def _ids(ids: Sequence[str]) -> str:
    shown = ", ".join(md_inline(str(i), max_len=60) for i in ids[:_LIST_LIMIT])
    more = f" and {len(ids) - _LIST_LIMIT} more" if len(ids) > _LIST_LIMIT else ""
    return (shown + more) or "none"


def _tally(tally: TargetTally | None) -> str:
    return f"{tally.repaired} / {tally.n}" if tally else "–"


def _section(f: FixEntry) -> list[str]:
    lines = [
        f"## {md_inline(f.id)}: {md_inline(f.title)}",
        "",
        f"- verdict: **{md_inline(f.verdict)}** — {md_inline(f.reason, max_len=400)}",
        f"- causes: {md_inline(', '.join(f.causes) or '–')}",
        f"- patch: {_patch_text(f.config_patch)}",
        f"- other pipelines: {md_inline(f.other_pipelines, max_len=400) or '–'}",
    ]
    for c in f.conflicts:
        lines.append(
            f"- conflict at {md_inline(c['path'])}: kept "
            f"{md_inline(json.dumps(c['kept'], sort_keys=True))}, dropped "
            f"{md_inline(json.dumps(c['dropped'], sort_keys=True))}"
        )
    t, g, b = f.targeted, f.golden, f.benign
    if t is None or g is None or b is None:
        return [*lines, ""]
    probes = f.probes or {}
    lines += [
        f"- targeted failures: {t.n} — repaired {t.repaired}, still failing "
        f"{t.still_failing}, unscored {t.unscored}; failure rate "
        f"{_arrow(BeforeAfter(before=t.before, after=t.after))}",
        "",
    ]
    lines += [
        "| suite | targeted (repaired / n) | failure rate, all groups, before → after | "
        "newly failing | repaired |",
        "|---|---|---|---|---|",
    ]
    per = t.per_probe
    for name, row in probes.items():
        lines.append(
            f"| {md_inline(name)} | {_tally(per.get(name))} | "
            f"{_arrow(row.failure_rate)} | {len(row.new_failures)} | "
            f"{len(row.repaired)} |"
        )
    lines.append(
        f"| golden (pass rate) | {_tally(per.get('golden'))} | {_arrow(g.pass_rate)} | – | – |"
    )
    lines += ["", "| golden metric | before → after |", "|---|---|"]
    for key in ("answer_contains", "false_refusal", "abstention"):
        lines.append(f"| {md_inline(key)} | {_arrow(getattr(g, key))} |")
    lines += [
        "",
        f"- benign controls ({md_inline(b.source)}): false refusal "
        f"{_arrow(b.false_refusal)}; new false refusals "
        f"{len(b.new_false_refusals)} (tolerance {b.tolerance}): "
        f"{_ids(b.new_false_refusals)}; resolved: {_ids(b.resolved)}",
    ]
    for name, row in probes.items():
        if row.new_failures:
            lines.append(f"- newly failing in {md_inline(name)}: {_ids(row.new_failures)}")
    return [*lines, ""]


def render_fix_markdown(data: FixArtifact) -> str:
    """``fix.md`` from ``fix.json``'s model (module docstring)."""
    fixes = data.fixes
    rule = data.rule
    lines = [
        "# ProbeGuard fix verification",
        "",
        f"Pipeline {md_inline(data.pipeline_name or '')} "
        f"(`{md_inline((data.pipeline_fingerprint or '')[:12])}`), seed {data.seed}: "
        f"{data.failures} failures, {data.attributed} attributed, "
        f"{data.without_fix} without a fix; {len(fixes)} fixes verified by re-running "
        "the failures they target and the benign controls with the patch applied.",
        "",
    ]
    if not fixes:
        lines += ["No fix to verify: the run has no attributed failure with a recommendation.", ""]
        return "\n".join(lines)
    lines += fix_table(fixes)
    lines += [
        "",
        "Rates are Wilson 95% intervals. The targeted failure rate is 1 before by "
        "construction; after, it is over the targets re-judged. A fix is *verified* when "
        "at least half its targeted failures are repaired (a significant drop), the "
        "re-run suites fail less in total, and no more than "
        f"{rule.tolerance:.0%} of the benign controls newly refuse; it "
        "*refuses everything* when more newly refuse and the false-refusal rate after "
        f"reaches {rule.sharp:.0%} (probeguard.engine.fixes.verdict).",
        "",
    ]
    verdicts = data.verdicts
    lines += ["Verdicts: " + ", ".join(f"{md_inline(k)} {v}" for k, v in verdicts.items()), ""]
    for f in fixes:
        lines += _section(f)
    return "\n".join(lines).rstrip("\n") + "\n"

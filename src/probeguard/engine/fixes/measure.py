"""Measuring one fix (``measure_fix``): validate its patch, build the patched pipeline,
re-execute the recorded cases of the re-run suites (``stages.build_runner``,
``stages.execute``), re-score them as a scan would (``stages.golden_verdicts``,
``probes.evaluate.judge_groups``), and compare with the run's own verdicts. What is
measured and why: ``probeguard.engine.fixes.verify``."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from probeguard.config.models import ScanConfig
from probeguard.core.cases import Case
from probeguard.core.documents import Document, corpus_fingerprint
from probeguard.core.errors import InputError, ProbeGuardError
from probeguard.core.pipeline import Pipeline
from probeguard.core.records import CaseRecord
from probeguard.engine.fixes.collect import Fix, describe
from probeguard.engine.fixes.patch import apply_patch
from probeguard.engine.fixes.verdict import FixCounts, allowed_new_refusals, decide_fix
from probeguard.engine.stages import (
    build_pipeline,
    build_runner,
    execute,
    golden_verdicts,
    load_inputs,
    scan_attack_cases,
    synthesize_missing,
)
from probeguard.metrics.golden import GoldenVerdict
from probeguard.probes import JudgeContext, make_probe, probe_classes
from probeguard.probes.evaluate import judge_groups, probe_context
from probeguard.results.fix import (
    BeforeAfter,
    BenignChange,
    Counts,
    FixEntry,
    GoldenChange,
    ProbeChange,
    TargetedChange,
    TargetRow,
    TargetTally,
)
from probeguard.results.run import RunLog
from probeguard.stats import Estimate, proportion, wilson

__all__ = ["RunContext", "benign_probes", "load_context", "measure_fix"]


@dataclass(frozen=True)
class RunContext:
    """What every fix's re-run shares: the run, its config, inputs and the probes."""

    run: RunLog
    config: ScanConfig
    documents: tuple[Document, ...]
    golden: tuple[Case, ...]
    attacks: tuple[Case, ...]
    probes_run: tuple[str, ...]
    benign: tuple[str, ...] = ()
    """The probes of ``probes_run`` whose groups are benign controls (``benign_probes``)."""


def benign_probes(probes: Sequence[str]) -> tuple[str, ...]:
    """The probes among ``probes`` (in their order) whose groups are benign controls
    (``Probe.benign_controls``)."""
    return tuple(name for name, cls in probe_classes(probes).items() if cls.benign_controls)


def load_context(run: RunLog, config: ScanConfig | None) -> RunContext:
    """The run's inputs, from ``config`` or the recorded config. ``InputError`` when the
    recorded config has redacted secrets or is invalid here, or the corpus or the rebuilt
    pipeline differs from the scanned one."""
    if config is None:
        if "<redacted>" in json.dumps(run.config.get("pipeline", {})):
            raise InputError(
                "the run's recorded config has redacted secrets; pass --config "
                "with the scan's config file",
                field="config.pipeline",
            )
        try:
            config = ScanConfig.model_validate(run.config)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise InputError(
                f"the recorded config is not valid here: {err['msg']}",
                field="config." + ".".join(str(p) for p in err["loc"]),
            ) from None
    documents, golden = load_inputs(config)
    synthesized = None if golden else synthesize_missing(config, documents)
    fingerprint = corpus_fingerprint(documents)
    if run.corpus_fingerprint is not None and fingerprint != run.corpus_fingerprint:
        raise InputError(
            f"the corpus has changed since the scan (fingerprint {fingerprint[:12]} "
            f"≠ the run's {run.corpus_fingerprint[:12]}): re-run the scan first",
            field="corpus",
        )
    if config.pipeline.type == "reference":
        pipeline = build_pipeline(config, documents)
        if pipeline.fingerprint() != run.pipeline_fingerprint:
            raise InputError(
                "the pipeline rebuilt from the config differs from the scanned "
                f"one (fingerprint {pipeline.fingerprint()[:12]} ≠ the run's "
                f"{run.pipeline_fingerprint[:12]}): pass the scan's --config, or "
                "re-run the scan",
                field="pipeline",
            )
    probes_run = tuple(dict.fromkeys(g.probe for g in run.groups))
    return RunContext(
        run=run,
        config=config,
        documents=tuple(documents),
        golden=tuple(synthesized.golden if synthesized else golden),
        attacks=tuple(scan_attack_cases(config, documents, synthesized)),
        probes_run=probes_run,
        benign=benign_probes(probes_run),
    )


def _rate(flags: Mapping[str, bool | None]) -> Estimate:
    return proportion([f for f in flags.values() if f is not None])


def _changes(
    before: Mapping[str, bool | None], after: Mapping[str, bool | None]
) -> tuple[list[str], list[str]]:
    """(newly failing, repaired) ids among those scored both times."""
    new = sorted(k for k, b in before.items() if b is False and after.get(k) is True)
    fixed = sorted(k for k, b in before.items() if b is True and after.get(k) is False)
    return new, fixed


def _golden_rates(
    records: Sequence[CaseRecord], verdicts: Mapping[str, GoldenVerdict]
) -> dict[str, Estimate]:
    scored = [(r, verdicts[r.case.id]) for r in records if r.case.id in verdicts]
    answerable = [v for r, v in scored if r.case.expected.mode != "abstain"]
    unanswerable = [v for r, v in scored if r.case.expected.mode == "abstain"]
    return {
        "answer_contains": proportion([v.contains for v in answerable if v.contains is not None]),
        "false_refusal": proportion([v.refused for v in answerable]),
        "abstention": proportion([v.refused for v in unanswerable]),
        "pass_rate": proportion([v.passed for _, v in scored]),
    }


def _rerun(
    ctx: RunContext,
    fix: Fix,
    pipeline: Pipeline,
    patched: ScanConfig,
    progress: Callable[[int, int], None] | None,
) -> tuple[list[str], dict[str, CaseRecord], tuple[int, int]]:
    """(the re-run probes, the re-run records by case id, (calls, cache hits)) for the
    recorded golden cases and the cases of the probes ``fix`` targets, plus the run's
    benign-control probes."""

    targeted = [p for p in ctx.probes_run if any(t[1] == p for t in fix.targets)]
    rerun = targeted + [p for p in ctx.benign if p not in targeted]
    cases = [r.case for r in ctx.run.records if r.case.probe == "golden" or r.case.probe in rerun]
    runner = build_runner(patched.runner, pipeline, progress=progress)
    done = execute(runner, list({c.id: c for c in cases}.values()))
    records = {r.case.id: r for r in done.records}
    return rerun, records, (done.stats.calls, done.stats.cache_hits)


def _golden_side(
    ctx: RunContext, after_records: Mapping[str, CaseRecord]
) -> tuple[dict[str, GoldenVerdict], dict[str, GoldenVerdict], GoldenChange]:
    """(verdicts before, verdicts after, before → after rates) of the golden cases."""
    golden = ctx.run.golden_records()
    before = {
        r.case.id: v
        for r in golden
        if r.output is not None and (v := GoldenVerdict.from_record(r)) is not None
    }
    rejudged = golden_verdicts([after_records[cid] for cid in before if cid in after_records])
    after = {r.case.id: v for r, v in rejudged if v is not None}
    gb, ga = _golden_rates(golden, before), _golden_rates(golden, after)
    change = GoldenChange.model_validate({k: BeforeAfter(before=gb[k], after=ga[k]) for k in gb})
    return before, after, change


def _probe_side(
    ctx: RunContext,
    rerun: Sequence[str],
    pipeline: Pipeline,
    after_records: Mapping[str, CaseRecord],
) -> tuple[dict[tuple[str, str], bool | None], dict[str, ProbeChange]]:
    """(group → failed after, per-probe changes) for the re-run probes, judged as a scan of
    the patched config would judge them."""

    pctx = probe_context(
        pipeline,
        ctx.documents,
        ctx.golden,
        seed=ctx.config.seed,
        top_k=ctx.config.probes.top_k,
        attack_cases=ctx.attacks,
    )
    jctx = JudgeContext(probe=pctx)
    records = [
        after_records[r.case.id]
        for r in ctx.run.records
        if r.case.probe in rerun and r.case.id in after_records
    ]
    failed: dict[tuple[str, str], bool | None] = {}
    rows: dict[str, ProbeChange] = {}
    for name in rerun:
        probe = make_probe(name, ctx.config.probes.settings.get(name))
        before = {g.group: g.failed for g in ctx.run.groups if g.probe == name}
        judged = {group: v.failed for group, _, v in judge_groups(probe, records, jctx)}
        after = {g: judged.get(g) for g in before}
        failed.update({(name, g): v for g, v in after.items()})
        new, fixed = _changes(before, after)
        rows[name] = ProbeChange(
            failure_rate=BeforeAfter(before=_rate(before), after=_rate(after)),
            new_failures=new,
            repaired=fixed,
            failed=Counts(
                before=sum(1 for v in before.values() if v),
                after=sum(1 for v in after.values() if v),
            ),
        )
    return failed, rows


def _targeted(
    fix: Fix,
    golden_failed: Mapping[str, bool | None],
    group_failed: Mapping[tuple[str, str], bool | None],
) -> TargetedChange:
    """The targeted failures before (all failed) → after, overall and per probe."""
    rows = [
        TargetRow.model_validate(
            {
                "kind": kind,
                "probe": probe_name,
                "group": group,
                "after_failed": golden_failed.get(group)
                if kind == "golden"
                else group_failed.get((probe_name, group)),
            }
        )
        for kind, probe_name, group in fix.targets
    ]
    still = sum(1 for r in rows if r.after_failed is True)
    repaired = sum(1 for r in rows if r.after_failed is False)
    per_probe: dict[str, dict[str, int]] = {}
    for r in rows:
        tally = per_probe.setdefault(r.probe, {"n": 0, "repaired": 0, "still_failing": 0})
        tally["n"] += 1
        tally["repaired"] += r.after_failed is False
        tally["still_failing"] += r.after_failed is True
    return TargetedChange(
        n=len(rows),
        before=wilson(len(rows), len(rows)),
        after=wilson(still, still + repaired),
        repaired=repaired,
        still_failing=still,
        unscored=len(rows) - still - repaired,
        per_probe={k: TargetTally(**v) for k, v in per_probe.items()},
        rows=rows,
    )


def _benign(
    ctx: RunContext,
    rerun: Sequence[str],
    g_before: Mapping[str, GoldenVerdict],
    g_after: Mapping[str, GoldenVerdict],
    group_failed: Mapping[tuple[str, str], bool | None],
    tolerance: float,
) -> BenignChange:
    """False refusals on the benign controls before → after, new and resolved (by id: the
    group, ``<probe>:<group>`` when the controls come from more than one probe)."""
    before: dict[str, bool | None]
    after: dict[str, bool | None]
    controls = [p for p in rerun if p in ctx.benign]
    if controls:
        source = ", ".join(controls)
        groups = [g for g in ctx.run.groups if g.probe in controls]
        ids = [g.group if len(controls) == 1 else f"{g.probe}:{g.group}" for g in groups]
        before = {i: g.failed for i, g in zip(ids, groups)}
        after = {i: group_failed.get((g.probe, g.group)) for i, g in zip(ids, groups)}
    else:
        source = "golden"
        answerable = {
            r.case.id for r in ctx.run.golden_records() if r.case.expected.mode != "abstain"
        }
        before = {k: v.refused for k, v in g_before.items() if k in answerable}
        after = {k: g_after[k].refused if k in g_after else None for k in before}
    both = [k for k in before if before[k] is not None and after.get(k) is not None]
    new, resolved = _changes({k: before[k] for k in both}, {k: after[k] for k in both})
    return BenignChange(
        source=source,
        probes=controls,
        n=len(both),
        false_refusal=BeforeAfter(
            before=proportion([bool(before[k]) for k in both]),
            after=proportion([bool(after[k]) for k in both]),
        ),
        refused=Counts(
            before=sum(1 for k in both if before[k]), after=sum(1 for k in both if after[k])
        ),
        new_false_refusals=new,
        resolved=resolved,
        tolerance=allowed_new_refusals(len(both), tolerance),
    )


def measure_fix(
    ctx: RunContext,
    fix: Fix,
    *,
    progress: Callable[[int, int], None] | None,
    tolerance: float,
    sharp: float,
) -> tuple[FixEntry, int, int]:
    """One fix: (its ``fix.json`` entry, calls, cache hits)."""

    described: dict[str, Any] = describe(fix)
    try:
        patched = apply_patch(ctx.config.model_dump(mode="json"), fix.config_patch)
        pipeline = build_pipeline(patched, ctx.documents)
    except (ProbeGuardError, ValueError, TypeError) as exc:
        return FixEntry(**described, verdict="error", reason=str(exc)), 0, 0
    rerun, after_records, (calls, hits) = _rerun(ctx, fix, pipeline, patched, progress)
    g_before, g_after, golden = _golden_side(ctx, after_records)
    golden_failed = {k: (g_after[k].passed is False) if k in g_after else None for k in g_before}
    group_failed, probes = _probe_side(ctx, rerun, pipeline, after_records)
    targeted = _targeted(fix, golden_failed, group_failed)
    benign = _benign(ctx, rerun, g_before, g_after, group_failed, tolerance)
    failed = Counts(
        before=sum(1 for v in g_before.values() if v.passed is False)
        + sum(p.failed.before for p in probes.values()),
        after=sum(1 for v in golden_failed.values() if v)
        + sum(p.failed.after for p in probes.values()),
    )
    counts = FixCounts(
        targeted=targeted.n,
        repaired=targeted.repaired,
        still_failing=targeted.still_failing,
        failed_before=failed.before,
        failed_after=failed.after,
        benign=benign.n,
        refused_before=benign.refused.before,
        refused_after=benign.refused.after,
        new_false_refusals=len(benign.new_false_refusals),
    )
    verdict, reason = decide_fix(counts, tolerance=tolerance, sharp=sharp)
    entry = FixEntry(
        **described,
        verdict=verdict,
        reason=reason,
        pipeline_fingerprint=pipeline.fingerprint(),
        rerun_suites=["golden", *rerun],
        targeted=targeted,
        probes=probes,
        golden=golden,
        benign=benign,
        failed=failed,
    )
    return entry, calls, hits

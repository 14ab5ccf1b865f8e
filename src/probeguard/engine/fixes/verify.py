"""Fix verification: apply each recommended fix to the reference pipeline's config, re-run
the failures it targets **and** the benign controls through the runner, and measure the
failure rate before and after, with intervals, and the new false refusals.

**Input.** A scan's ``run.json`` (``RunLog``): its recorded config (or the scan's config file,
``config=``, when the recorded one has redacted secrets), corpus (refused when its
fingerprint differs from ``run.corpus_fingerprint``), records, groups and attribution. The
pipeline rebuilt from the config must have the run's fingerprint (else the "before" would
describe another pipeline).

**Fixes.** The attribution entries grouped by ``recommendation.config_patch`` (an identical
patch is one fix; its targets are those entries' failures), most targets first, then by
title; ids ``fix-1``, ``fix-2``, …. ``combined`` adds, after them, one fix merging the
patches (``patch.merge_patches``) of the fixes judged ``verified`` or ``partial`` on their
own (a fix that refuses everything would only mask the others), targeting their failures;
``patches`` adds a user-written fix (``custom``) targeting every failure of the scan
(failed golden cases and failed probe groups). Entries without a recommendation
(``undetermined``) are counted only.

**Re-runs (the faithful route chosen).** For each fix the patched config is validated
(``patch.apply_patch``), the patched pipeline built, and the **recorded cases** of the
re-run suites are run again through a ``Runner`` over it (same case ids, variations,
overlays and roles as the scan: the probes are not re-planned, so a patched chunker does not
change *which* cases are asked; the cache is shared, its keys hold the pipeline
fingerprint). The suites: every golden case, and every case of each probe that a target
belongs to, plus ``benign_control`` when the scan ran it. They are re-judged exactly as the
scan judged them: golden cases by ``metrics.golden.score_golden_record``; each probe's
groups by ``probe.judge`` (the probe built from the scan's settings) with a
``JudgeContext`` from ``probe_context`` of the patched pipeline, as a scan of the patched
config would. "Before" is the run's own verdicts.

**Measured per fix** (every rate a Wilson ``Estimate``):

* ``targeted``: failure rate of the targeted failures, before (1 by construction) → after,
  over those re-judged after (unscored ones are counted apart); repaired / still failing,
  also per probe, and each target's outcome (``rows``);
* ``probes``: per re-run probe, the failure rate over *all* its groups before → after, and
  the groups newly failing (passed before, fail after) and repaired — a fix can break others;
* ``golden``: answer contains, false refusal (answerable questions) and abstention
  (unanswerable ones), before → after;
* ``benign``: the benign controls — the ``benign_control`` groups when the scan ran that
  probe (its golden questions and planted attack-quoting pages), else the answerable golden
  questions (refused) — false-refusal rate before → after, the **new false refusals**
  (answered before, refuse after, by id) and the resolved ones;
* ``verdict`` and ``reason`` (``fixes.verdict``).

On a pipeline that is not the reference pipeline every fix is ``not_applicable`` and its
``other_pipelines`` sentence is the advice.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from probeguard.config.models import ScanConfig
from probeguard.core.cases import Case
from probeguard.core.documents import corpus_fingerprint
from probeguard.core.errors import InputError, ProbeGuardError
from probeguard.core.io import json_safe
from probeguard.core.records import CaseRecord, RunLog
from probeguard.engine.fixes.patch import apply_patch, merge_patches
from probeguard.engine.fixes.verdict import (
    SHARP,
    TOLERANCE,
    FixCounts,
    allowed_new_refusals,
    decide_fix,
)
from probeguard.engine.scan import build_pipeline, load_attacks, load_inputs
from probeguard.metrics.golden import score_golden_record
from probeguard.probes import JudgeContext, group_records, make_probe
from probeguard.probes.evaluate import probe_context
from probeguard.runner.cache import ResponseCache
from probeguard.runner.executor import Runner, RunnerConfig
from probeguard.runner.retry import RetryPolicy
from probeguard.stats import Estimate, proportion, wilson

__all__ = [
    "FIX_VERSION",
    "BENIGN_PROBE",
    "COMBINABLE",
    "Fix",
    "FixRun",
    "all_failures",
    "collect_fixes",
    "load_run",
    "verify_fixes",
]

FIX_VERSION = 1
BENIGN_PROBE = "benign_control"
Target = tuple[str, str, str]
"""(kind, probe, group): ``("golden", "golden", case id)`` or ``("probe", name, group)``."""


@dataclass
class Fix:
    """One fix to verify: a patch and the failures it targets."""

    id: str
    title: str
    causes: list[str]
    config_patch: dict[str, Any]
    other_pipelines: str = ""
    why: str = ""
    targets: list[Target] = field(default_factory=list)
    conflicts: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class FixRun:
    """The verification's result: ``data`` is ``fix.json``; ``calls``/``cache_hits`` are
    the re-runs' cost (not written, so the files do not change between reruns)."""

    data: dict[str, Any]
    calls: int = 0
    cache_hits: int = 0


def load_run(run_dir: str | Path) -> RunLog:
    """``RUN_DIR/run.json`` as a ``RunLog`` (``InputError`` naming the file otherwise)."""
    path = Path(run_dir) / "run.json"
    if not Path(run_dir).is_dir():
        raise InputError("not a run directory (give the --out folder of a scan)", file=str(run_dir))
    if not path.is_file():
        raise InputError(
            "no run.json here: the scan did not finish, or this is not a run directory",
            file=str(path),
        )
    try:
        return RunLog.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(
            f"not a valid run log: {err['msg']}",
            file=str(path),
            field=".".join(str(p) for p in err["loc"]) or None,
        ) from None


def _key(patch: Mapping[str, Any]) -> str:
    return json.dumps(patch, sort_keys=True, default=str)


def _target(entry: Any) -> Target:
    return (entry.kind, entry.probe, entry.group)


def collect_fixes(run: RunLog) -> list[Fix]:
    """The run's distinct recommended fixes (module docstring: grouping and order)."""
    by_patch: dict[str, Fix] = {}
    for entry in run.attribution:
        rec = entry.recommendation
        if not rec or not rec.get("config_patch"):
            continue
        key = _key(rec["config_patch"])
        fix = by_patch.get(key)
        if fix is None:
            fix = by_patch[key] = Fix(
                id="",
                title=str(rec.get("title", "")),
                causes=[],
                config_patch=dict(rec["config_patch"]),
                other_pipelines=str(rec.get("other_pipelines", "")),
                why=str(rec.get("why", "")),
            )
        if entry.cause not in fix.causes:
            fix.causes.append(entry.cause)
        target = _target(entry)
        if target not in fix.targets:
            fix.targets.append(target)
    fixes = sorted(
        by_patch.values(), key=lambda f: (-len(f.targets), f.title, _key(f.config_patch))
    )
    for i, fix in enumerate(fixes, 1):
        fix.id = f"fix-{i}"
        fix.causes.sort()
    return fixes


COMBINABLE = ("verified", "partial")
"""Verdicts of the fixes that ``combined`` merges (those that repair without refusing)."""


def _combined(fixes: Sequence[Fix]) -> Fix:
    patch, conflicts = merge_patches([f.config_patch for f in fixes])
    targets = list(dict.fromkeys(t for f in fixes for t in f.targets))
    return Fix(
        id="combined",
        title="Improving fixes combined (" + ", ".join(f.id for f in fixes) + ")",
        causes=sorted({c for f in fixes for c in f.causes}),
        config_patch=patch,
        other_pipelines="Apply the fixes it merges together.",
        why="every fix verified or partially verified on its own, at once",
        targets=targets,
        conflicts=conflicts,
    )


def all_failures(run: RunLog) -> list[Target]:
    """Every failure of the run: failed golden cases, then failed probe groups."""
    out: list[Target] = [
        ("golden", "golden", r.case.id)
        for r in run.records
        if r.case.probe == "golden" and r.verdict.get("passed") is False
    ]
    out += [("probe", g.probe, g.group) for g in run.groups if g.failed]
    return out


# -- measuring -----------------------------------------------------------------------------


def _est(e: Estimate) -> dict[str, Any]:
    return e.model_dump()


def _golden_rates(
    records: Sequence[CaseRecord], verdicts: Mapping[str, dict[str, Any]]
) -> dict[str, Estimate]:
    scored = [(r, verdicts[r.case.id]) for r in records if verdicts.get(r.case.id)]
    answerable = [v for r, v in scored if r.case.expected.mode != "abstain"]
    unanswerable = [v for r, v in scored if r.case.expected.mode == "abstain"]
    return {
        "answer_contains": proportion([bool(v.get("contains")) for v in answerable]),
        "false_refusal": proportion([bool(v.get("refused")) for v in answerable]),
        "abstention": proportion([bool(v.get("refused")) for v in unanswerable]),
        "pass_rate": proportion([bool(v.get("passed")) for _, v in scored]),
    }


def _rate(flags: Mapping[str, bool | None]) -> Estimate:
    return proportion([f for f in flags.values() if f is not None])


def _changes(
    before: Mapping[str, bool | None], after: Mapping[str, bool | None]
) -> tuple[list[str], list[str]]:
    """(newly failing, repaired) ids among those scored both times."""
    new = sorted(k for k, b in before.items() if b is False and after.get(k) is True)
    fixed = sorted(k for k, b in before.items() if b is True and after.get(k) is False)
    return new, fixed


@dataclass
class _Scan:
    """What every fix's re-run shares: the run, its config, inputs and the probes."""

    run: RunLog
    config: ScanConfig
    documents: list[Any]
    golden: list[Case]
    attacks: list[Case]
    probes_run: list[str]


def _load_scan(run: RunLog, config: ScanConfig | None) -> _Scan:
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
    probes_run = list(dict.fromkeys(g.probe for g in run.groups))
    return _Scan(
        run, config, list(documents), list(golden), load_attacks(config, documents), probes_run
    )


def _rerun(
    scan: _Scan,
    fix: Fix,
    pipeline: Any,
    patched: ScanConfig,
    progress: Callable[[int, int], None] | None,
) -> tuple[list[str], Any]:
    """(the re-run probes, the runner's result) for the recorded golden cases and the cases
    of the probes ``fix`` targets, plus ``benign_control``."""

    targeted = [p for p in scan.probes_run if any(t[1] == p for t in fix.targets)]
    rerun = targeted + (
        [BENIGN_PROBE] if BENIGN_PROBE in scan.probes_run and BENIGN_PROBE not in targeted else []
    )
    cases = [r.case for r in scan.run.records if r.case.probe == "golden" or r.case.probe in rerun]
    rc = patched.runner
    runner = Runner(
        pipeline,
        RunnerConfig(
            concurrency=rc.concurrency,
            timeout_s=rc.timeout_s,
            retry=RetryPolicy(retries=rc.retries),
        ),
        cache=ResponseCache(rc.cache_dir) if rc.cache_dir else None,
        progress=progress,
    )
    return rerun, runner.run(list({c.id: c for c in cases}.values()))


def _golden_side(
    scan: _Scan, after_records: Mapping[str, CaseRecord]
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(verdicts before, verdicts after, before → after rates) of the golden cases."""
    golden = [r for r in scan.run.records if r.case.probe == "golden"]
    before = {r.case.id: r.verdict for r in golden if r.output is not None}
    after = {cid: score_golden_record(after_records[cid]) for cid in before if cid in after_records}
    after = {k: v for k, v in after.items() if v}
    gb, ga = _golden_rates(golden, before), _golden_rates(golden, after)
    return before, after, {k: {"before": _est(gb[k]), "after": _est(ga[k])} for k in gb}


def _probe_side(
    scan: _Scan, rerun: Sequence[str], pipeline: Any, after_records: Mapping[str, CaseRecord]
) -> tuple[dict[tuple[str, str], bool | None], dict[str, Any]]:
    """(group → failed after, per-probe rows) for the re-run probes, judged as a scan of the
    patched config would judge them."""

    ctx = probe_context(
        pipeline,
        scan.documents,
        scan.golden,
        seed=scan.config.seed,
        top_k=scan.config.probes.top_k,
        attack_cases=scan.attacks,
    )
    jctx = JudgeContext(probe=ctx)
    records = [
        after_records[r.case.id]
        for r in scan.run.records
        if r.case.probe in rerun and r.case.id in after_records
    ]
    failed: dict[tuple[str, str], bool | None] = {}
    rows: dict[str, Any] = {}
    for name in rerun:
        probe = make_probe(name, scan.config.probes.settings.get(name))
        before = {g.group: g.failed for g in scan.run.groups if g.probe == name}
        judged = {
            group: probe.judge(group, by_role, jctx).failed
            for group, by_role in group_records(records, name).items()
        }
        after = {g: judged.get(g) for g in before}
        failed.update({(name, g): v for g, v in after.items()})
        new, fixed = _changes(before, after)
        rows[name] = {
            "failure_rate": {"before": _est(_rate(before)), "after": _est(_rate(after))},
            "new_failures": new,
            "repaired": fixed,
            "failed": {
                "before": sum(1 for v in before.values() if v),
                "after": sum(1 for v in after.values() if v),
            },
        }
    return failed, rows


def _targeted(
    fix: Fix,
    golden_failed: Mapping[str, bool | None],
    group_failed: Mapping[tuple[str, str], bool | None],
) -> dict[str, Any]:
    """The targeted failures before (all failed) → after, overall and per probe."""
    rows: list[dict[str, Any]] = []
    for kind, probe_name, group in fix.targets:
        now = (
            golden_failed.get(group) if kind == "golden" else group_failed.get((probe_name, group))
        )
        rows.append({"kind": kind, "probe": probe_name, "group": group, "after_failed": now})
    still = sum(1 for r in rows if r["after_failed"] is True)
    repaired = sum(1 for r in rows if r["after_failed"] is False)
    per_probe: dict[str, dict[str, int]] = {}
    for r in rows:
        tally = per_probe.setdefault(r["probe"], {"n": 0, "repaired": 0, "still_failing": 0})
        tally["n"] += 1
        tally["repaired"] += r["after_failed"] is False
        tally["still_failing"] += r["after_failed"] is True
    return {
        "n": len(rows),
        "before": _est(wilson(len(rows), len(rows))),
        "after": _est(wilson(still, still + repaired)),
        "repaired": repaired,
        "still_failing": still,
        "unscored": len(rows) - still - repaired,
        "per_probe": per_probe,
        "rows": rows,
    }


def _benign(
    scan: _Scan,
    rerun: Sequence[str],
    g_before: Mapping[str, Any],
    g_after: Mapping[str, Any],
    group_failed: Mapping[tuple[str, str], bool | None],
    tolerance: float,
) -> dict[str, Any]:
    """False refusals on the benign controls before → after, new and resolved (by id)."""
    if BENIGN_PROBE in rerun:
        source = BENIGN_PROBE
        before = {g.group: g.failed for g in scan.run.groups if g.probe == BENIGN_PROBE}
        after = {g: group_failed.get((BENIGN_PROBE, g)) for g in before}
    else:
        source = "golden"
        answerable = {
            r.case.id
            for r in scan.run.records
            if r.case.probe == "golden" and r.case.expected.mode != "abstain"
        }
        before = {k: bool(v.get("refused")) for k, v in g_before.items() if k in answerable}
        after = {k: bool(g_after[k].get("refused")) if k in g_after else None for k in before}
    both = [k for k in before if before[k] is not None and after.get(k) is not None]
    new, resolved = _changes({k: before[k] for k in both}, {k: after[k] for k in both})
    return {
        "source": source,
        "n": len(both),
        "false_refusal": {
            "before": _est(proportion([bool(before[k]) for k in both])),
            "after": _est(proportion([bool(after[k]) for k in both])),
        },
        "refused": {
            "before": sum(1 for k in both if before[k]),
            "after": sum(1 for k in both if after[k]),
        },
        "new_false_refusals": new,
        "resolved": resolved,
        "tolerance": allowed_new_refusals(len(both), tolerance),
    }


def _measure(
    scan: _Scan,
    fix: Fix,
    *,
    progress: Callable[[int, int], None] | None,
    tolerance: float,
    sharp: float,
) -> tuple[dict[str, Any], int, int]:
    """One fix: (its ``fix.json`` entry, calls, cache hits)."""

    entry = _describe(fix)
    try:
        patched = apply_patch(scan.config.model_dump(mode="json"), fix.config_patch)
        pipeline = build_pipeline(patched, scan.documents)
    except (ProbeGuardError, ValueError, TypeError) as exc:
        entry.update(verdict="error", reason=str(exc))
        return entry, 0, 0
    rerun, result = _rerun(scan, fix, pipeline, patched, progress)
    after_records = {r.case.id: r for r in result.records}
    g_before, g_after, golden = _golden_side(scan, after_records)
    golden_failed = {
        k: (g_after[k].get("passed") is False) if k in g_after else None for k in g_before
    }
    group_failed, probes = _probe_side(scan, rerun, pipeline, after_records)
    targeted = _targeted(fix, golden_failed, group_failed)
    benign = _benign(scan, rerun, g_before, g_after, group_failed, tolerance)
    failed = {
        "before": sum(1 for v in g_before.values() if v.get("passed") is False)
        + sum(p["failed"]["before"] for p in probes.values()),
        "after": sum(1 for v in golden_failed.values() if v)
        + sum(p["failed"]["after"] for p in probes.values()),
    }
    counts = FixCounts(
        targeted=targeted["n"],
        repaired=targeted["repaired"],
        still_failing=targeted["still_failing"],
        failed_before=failed["before"],
        failed_after=failed["after"],
        benign=benign["n"],
        refused_before=benign["refused"]["before"],
        refused_after=benign["refused"]["after"],
        new_false_refusals=len(benign["new_false_refusals"]),
    )
    verdict, reason = decide_fix(counts, tolerance=tolerance, sharp=sharp)
    entry.update(
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
    return entry, result.stats.calls, result.stats.cache_hits


def _describe(fix: Fix) -> dict[str, Any]:
    return {
        "id": fix.id,
        "title": fix.title,
        "causes": list(fix.causes),
        "config_patch": fix.config_patch,
        "other_pipelines": fix.other_pipelines,
        "why": fix.why,
        "conflicts": fix.conflicts,
        "targets": [{"kind": k, "probe": p, "group": g} for k, p, g in fix.targets],
    }


def verify_fixes(
    run_dir: str | Path,
    *,
    config: ScanConfig | None = None,
    combined: bool = False,
    patches: Mapping[str, Any] | None = None,
    cache_dir: Path | None | str = "recorded",
    progress: Callable[[str, int, int], None] | None = None,
    tolerance: float = TOLERANCE,
    sharp: float = SHARP,
) -> FixRun:
    """Verify the fixes of the run in ``run_dir`` (module docstring). ``config``: the
    scan's config instead of the recorded one; ``combined``: also the fixes that help on
    their own, at once;
    ``patches``: also a user-written patch (dotted paths → values); ``cache_dir``: the
    response cache (``"recorded"``: the scan's; None: none). Raises ``InputError`` on a bad
    run directory, a changed corpus or pipeline, or a bad user patch."""

    run = load_run(run_dir)
    fixes = collect_fixes(run)
    extra: list[Fix] = []
    if patches:
        # A bad user patch is bad input: refused before anything runs.
        apply_patch(config.model_dump(mode="json") if config is not None else run.config, patches)
        extra.append(
            Fix(
                id="custom",
                title="Custom patch",
                causes=[],
                config_patch=dict(patches),
                other_pipelines="",
                why="given on the command line",
                targets=all_failures(run),
            )
        )
    header: dict[str, Any] = {
        "version": FIX_VERSION,
        "pipeline_name": run.pipeline_name,
        "pipeline_fingerprint": run.pipeline_fingerprint,
        "corpus_fingerprint": run.corpus_fingerprint,
        "seed": run.seed,
        "failures": len(all_failures(run)),
        "attributed": len(run.attribution),
        "without_fix": sum(
            1 for e in run.attribution if not (e.recommendation or {}).get("config_patch")
        ),
        "rule": {"tolerance": tolerance, "sharp": sharp},
    }
    pipeline_type = (
        config.pipeline.type
        if config is not None
        else str(run.config.get("pipeline", {}).get("type", "reference"))
    )
    entries: list[dict[str, Any]] = []
    calls = hits = 0
    if pipeline_type != "reference":
        for fix in [*fixes, *extra]:
            entries.append(
                {
                    **_describe(fix),
                    "verdict": "not_applicable",
                    "reason": f"the scanned pipeline is '{pipeline_type}', not the "
                    "reference pipeline: " + (fix.other_pipelines or "apply the change by hand"),
                }
            )
    else:
        scan = _load_scan(run, config)
        if cache_dir != "recorded":
            runner = scan.config.runner.model_copy(
                update={"cache_dir": Path(cache_dir) if cache_dir is not None else None}
            )
            scan.config = scan.config.model_copy(update={"runner": runner})

        def measure(fix: Fix) -> None:
            nonlocal calls, hits
            step = (
                (lambda done, total: progress(fix.id, done, total))
                if progress is not None
                else None
            )
            entry, c, h = _measure(scan, fix, progress=step, tolerance=tolerance, sharp=sharp)
            entries.append(entry)
            calls, hits = calls + c, hits + h

        for fix in fixes:
            measure(fix)
        improving = [f for f, e in zip(fixes, entries) if e["verdict"] in COMBINABLE]
        if combined and len(improving) > 1:
            measure(_combined(improving))
        for fix in extra:
            measure(fix)
    verdicts: dict[str, int] = {}
    for e in entries:
        verdicts[e["verdict"]] = verdicts.get(e["verdict"], 0) + 1
    data = {**header, "fixes": entries, "verdicts": dict(sorted(verdicts.items()))}
    return FixRun(json_safe(data), calls=calls, cache_hits=hits)

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
its reason names the repairs a fix made on its own that fail under the combined patch
(``undone_repairs``: one merged defence undoing another);
``patches`` adds a user-written fix (``custom``) targeting every failure of the scan
(failed golden cases and failed probe groups). Entries without a recommendation
(``undetermined``) are counted only; a recommendation without a patch (advice in words, one
fix per title) is listed as ``not_applicable`` with its sentence.

**Re-runs (the faithful route chosen).** For each fix the patched config is validated
(``patch.apply_patch``), the patched pipeline built, and the **recorded cases** of the
re-run suites are run again through a ``Runner`` over it (same case ids, variations,
overlays and roles as the scan: the probes are not re-planned, so a patched chunker does not
change *which* cases are asked; the cache is shared, its keys hold the pipeline
fingerprint). The suites: every golden case, and every case of each probe that a target
belongs to, plus the benign-control probes the scan ran (``Probe.benign_controls``). They
are re-judged exactly as the scan judged them: golden cases by
``metrics.golden.score_golden_record``; each probe's groups by ``probe.judge`` (the probe
built from the scan's settings) with a ``JudgeContext`` from ``probe_context`` of the
patched pipeline, as a scan of the patched config would. "Before" is the run's own verdicts.

**Measured per fix** (every rate a Wilson ``Estimate``):

* ``targeted``: failure rate of the targeted failures, before (1 by construction) → after,
  over those re-judged after (unscored ones are counted apart); repaired / still failing,
  also per probe, and each target's outcome (``rows``);
* ``probes``: per re-run probe, the failure rate over *all* its groups before → after, and
  the groups newly failing (passed before, fail after) and repaired — a fix can break others;
* ``golden``: answer contains, false refusal (answerable questions) and abstention
  (unanswerable ones), before → after;
* ``benign``: the benign controls — the groups of the benign-control probes when the scan
  ran one (``Probe.benign_controls``; the built-in ``benign_control``: its golden questions
  and planted attack-quoting pages), else the answerable golden questions (refused) —
  false-refusal rate before → after, the **new false refusals** (answered before, refuse
  after, by id) and the resolved ones; ``benign.probes`` names the benign-control probes;
* ``verdict`` and ``reason`` (``fixes.verdict``).

On a pipeline that is not the reference pipeline every fix is ``not_applicable`` and its
``other_pipelines`` sentence is the advice.

Where: which fixes (``fixes.collect``), measuring one (``fixes.measure``), the saved result
(``results.fix.FixArtifact``, rendered by ``reports.fix_markdown``), and here the loop over
the fixes and the render stage (``write_fix``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from probeguard._version import __version__
from probeguard.config.models import ScanConfig
from probeguard.core.artifacts import artifact_json, write_artifact
from probeguard.core.io import atomic_write_text
from probeguard.engine.fixes.collect import (
    COMBINABLE,
    Fix,
    all_failures,
    collect_fixes,
    combined_fix,
    describe,
    load_run,
)
from probeguard.engine.fixes.measure import load_context, measure_fix
from probeguard.engine.fixes.patch import apply_patch
from probeguard.engine.fixes.verdict import SHARP, TOLERANCE
from probeguard.reports.fix_markdown import render_fix_markdown
from probeguard.reports.html_pages import fix_html
from probeguard.results.fix import FixArtifact, FixEntry, FixRule

__all__ = ["FIX_JSON", "FIX_MD", "FixRun", "undone_repairs", "verify_fixes", "write_fix"]

FIX_JSON = "fix.json"
FIX_MD = "fix.md"
FIX_HTML = "fix.html"


@dataclass(frozen=True)
class FixRun:
    """The verification's result: ``artifact`` is ``fix.json``; ``calls``/``cache_hits``
    are the re-runs' cost (not written, so the files do not change between reruns)."""

    artifact: FixArtifact
    calls: int = 0
    cache_hits: int = 0

    @property
    def data(self) -> dict[str, Any]:
        """``fix.json``'s data (NaN written as null)."""
        return artifact_json(self.artifact)


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
    pipeline_type = (
        config.pipeline.type
        if config is not None
        else str(run.config.get("pipeline", {}).get("type", "reference"))
    )
    entries: list[FixEntry] = []
    calls = hits = 0
    if pipeline_type != "reference":
        for fix in [*fixes, *extra]:
            entries.append(
                _in_words(
                    fix, f"the scanned pipeline is '{pipeline_type}', not the reference pipeline"
                )
            )
    else:
        ctx = load_context(run, config)
        if cache_dir != "recorded":
            runner = ctx.config.runner.model_copy(
                update={"cache_dir": Path(cache_dir) if cache_dir is not None else None}
            )
            ctx = replace(ctx, config=ctx.config.model_copy(update={"runner": runner}))

        def measure(fix: Fix) -> None:
            nonlocal calls, hits
            step = (
                (lambda done, total: progress(fix.id, done, total))
                if progress is not None
                else None
            )
            entry, c, h = measure_fix(ctx, fix, progress=step, tolerance=tolerance, sharp=sharp)
            entries.append(entry)
            calls, hits = calls + c, hits + h

        for fix in fixes:
            if fix.config_patch:
                measure(fix)
            else:
                entries.append(_in_words(fix, "no setting of the reference pipeline expresses it"))
        improving = [
            f for f, e in zip(fixes, entries) if e.verdict in COMBINABLE and f.config_patch
        ]
        if combined and len(improving) > 1:
            measure(combined_fix(improving))
            entries[-1] = _with_undone(entries[-1], [e for e in entries if e.id.startswith("fix-")])
        for fix in extra:
            measure(fix)
    verdicts: dict[str, int] = {}
    for e in entries:
        verdicts[e.verdict] = verdicts.get(e.verdict, 0) + 1
    artifact = FixArtifact(
        probeguard_version=__version__,
        pipeline_name=run.pipeline_name,
        pipeline_fingerprint=run.pipeline_fingerprint,
        corpus_fingerprint=run.corpus_fingerprint,
        seed=run.seed,
        failures=len(all_failures(run)),
        attributed=len(run.attribution),
        without_fix=sum(
            1 for e in run.attribution if not (e.recommendation or {}).get("config_patch")
        ),
        rule=FixRule(tolerance=tolerance, sharp=sharp),
        fixes=entries,
        verdicts=dict(sorted(verdicts.items())),
    )
    return FixRun(artifact, calls=calls, cache_hits=hits)


def undone_repairs(singles: Sequence[FixEntry], combined: FixEntry) -> dict[str, list[str]]:
    """Per fix among ``singles``: its targets (``probe:group``) that it repaired on its own
    but that still fail under ``combined`` — one merged defence undoing another."""
    if combined.targeted is None:
        return {}
    after = {(r.kind, r.probe, r.group): r.after_failed for r in combined.targeted.rows}
    out: dict[str, list[str]] = {}
    for entry in singles:
        rows = entry.targeted.rows if entry.targeted is not None else []
        lost = [
            f"{r.probe}:{r.group}"
            for r in rows
            if r.after_failed is False and after.get((r.kind, r.probe, r.group)) is True
        ]
        if lost:
            out[entry.id] = lost
    return out


def _with_undone(combined: FixEntry, singles: Sequence[FixEntry]) -> FixEntry:
    """``combined`` with its reason naming the repairs it undoes (``undone_repairs``)."""
    undone = undone_repairs(singles, combined)
    if not undone:
        return combined
    total = sum(len(v) for v in undone.values())
    per_fix = ", ".join(f"{k}: {len(v)}" for k, v in undone.items())
    words = f"; undoes {total} repairs its fixes make on their own ({per_fix})"
    return combined.model_copy(update={"reason": combined.reason + words})


def _in_words(fix: Fix, why: str) -> FixEntry:
    """A fix that cannot be applied here: ``not_applicable``, its sentence the advice."""
    return FixEntry(
        **describe(fix),
        verdict="not_applicable",
        reason=f"{why}: " + (fix.other_pipelines or "apply the change by hand"),
    )


def write_fix(result: FixRun, out_dir: str | Path) -> tuple[Path, Path]:
    """The render stage: ``fix.json``, ``fix.md`` and ``fix.html`` into ``out_dir`` (atomically)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_artifact(out / FIX_JSON, result.artifact)
    markdown = render_fix_markdown(result.artifact)
    atomic_write_text(out / FIX_MD, markdown)
    atomic_write_text(out / FIX_HTML, fix_html(result.artifact, markdown))
    return out / FIX_JSON, out / FIX_MD

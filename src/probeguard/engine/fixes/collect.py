"""Which fixes to verify: a run's recommended fixes grouped by patch (``collect_fixes``),
every failure of a run (``all_failures``), and the combined fix (``combined_fix``). Grouping,
order and ids: ``probeguard.engine.fixes.verify``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from probeguard.core.errors import InputError
from probeguard.engine.fixes.patch import merge_patches
from probeguard.metrics.golden import GoldenVerdict
from probeguard.results.fix import FixTarget
from probeguard.results.run import RunLog, load_run_log

__all__ = [
    "COMBINABLE",
    "Fix",
    "Target",
    "all_failures",
    "collect_fixes",
    "combined_fix",
    "describe",
    "load_run",
]

Target = tuple[str, str, str]
"""(kind, probe, group): ``("golden", "golden", case id)`` or ``("probe", name, group)``."""

COMBINABLE = ("verified", "partial")
"""Verdicts of the fixes that ``combined`` merges (those that repair without refusing)."""


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


def describe(fix: Fix) -> dict[str, Any]:
    """The fields of ``fix``'s ``fix.json`` entry that describe it."""
    return {
        "id": fix.id,
        "title": fix.title,
        "causes": list(fix.causes),
        "config_patch": fix.config_patch,
        "other_pipelines": fix.other_pipelines,
        "why": fix.why,
        "conflicts": fix.conflicts,
        "targets": [
            FixTarget.model_validate({"kind": k, "probe": p, "group": g}) for k, p, g in fix.targets
        ],
    }


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
    return load_run_log(path)


def _key(patch: Mapping[str, Any]) -> str:
    return json.dumps(patch, sort_keys=True, default=str)


def collect_fixes(run: RunLog) -> list[Fix]:
    """The run's distinct recommended fixes (grouping and order: ``fixes.verify``)."""
    by_patch: dict[str, Fix] = {}
    for entry in run.attribution:
        rec = entry.recommendation
        if not rec:
            continue
        # A fix in words only (no patch: a pipeline other than the reference one, or a change
        # no setting expresses) is one fix per title, listed but not measured.
        key = _key(rec["config_patch"]) if rec.get("config_patch") else f"title:{rec['title']}"
        fix = by_patch.get(key)
        if fix is None:
            fix = by_patch[key] = Fix(
                id="",
                title=str(rec.get("title", "")),
                causes=[],
                config_patch=dict(rec.get("config_patch") or {}),
                other_pipelines=str(rec.get("other_pipelines", "")),
                why=str(rec.get("why", "")),
            )
        if entry.cause not in fix.causes:
            fix.causes.append(entry.cause)
        target = (entry.kind, entry.probe, entry.group)
        if target not in fix.targets:
            fix.targets.append(target)
    fixes = sorted(
        by_patch.values(), key=lambda f: (-len(f.targets), f.title, _key(f.config_patch))
    )
    for i, fix in enumerate(fixes, 1):
        fix.id = f"fix-{i}"
        fix.causes.sort()
    return fixes


def combined_fix(fixes: Sequence[Fix]) -> Fix:
    """One fix merging ``fixes``' patches (conflicts noted), targeting all their failures."""
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
    out: list[Target] = []
    for r in run.golden_records():
        verdict = GoldenVerdict.from_record(r)
        if verdict is not None and verdict.passed is False:
            out.append(("golden", "golden", r.case.id))
    out += [("probe", g.probe, g.group) for g in run.groups if g.failed]
    return out

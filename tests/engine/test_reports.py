"""The render step's reports (engine.reports): report.md and report.html beside run.json,
with the verified effect of each top fix when the run's own fix/fix.json exists."""

from __future__ import annotations

from probeguard.engine.reports import load_verified, write_reports
from probeguard.results.fix import FixArtifact
from probeguard.results.run import RunLog
from probeguard.stats import wilson

PATCH = {"pipeline.reference.prompt": "hardened"}


def _run() -> RunLog:
    fix = {
        "cause": "prompt",
        "title": "Harden the prompt",
        "config_patch": PATCH,
        "other_pipelines": "Mark retrieved text as data.",
        "why": "it repairs",
        "cases": 2,
    }
    return RunLog(
        probeguard_version="0",
        config={},
        pipeline_name="p",
        pipeline_fingerprint="f" * 64,
        corpus_fingerprint="c" * 64,
        seed=3,
        summary={
            "attribution": {
                "enabled": True,
                "failures": 2,
                "attributed": 2,
                "skipped": 0,
                "max_cases": 10,
                "swaps": [],
                "reruns": 0,
                "calls": 0,
                "causes": {"prompt": 2},
                "per_probe": {},
                "swaps_not_run": {},
                "top_fixes": [fix],
            }
        },
        groups=[{"probe": "prompt_hijack", "group": "q1", "failed": True, "case_ids": []}],
    )


def _fix_json(run: RunLog, seed: int) -> str:
    before, after = wilson(2, 2).model_dump(), wilson(0, 2).model_dump()
    entry = {
        "id": "fix-1",
        "title": "Harden the prompt",
        "causes": ["prompt"],
        "config_patch": PATCH,
        "other_pipelines": "",
        "why": "",
        "targets": [],
        "verdict": "verified",
        "reason": "",
        "targeted": {
            "n": 2,
            "before": before,
            "after": after,
            "repaired": 2,
            "still_failing": 0,
            "unscored": 0,
            "per_probe": {},
            "rows": [],
        },
    }
    return FixArtifact.model_validate(
        {
            "probeguard_version": "0",
            "pipeline_fingerprint": run.pipeline_fingerprint,
            "corpus_fingerprint": run.corpus_fingerprint,
            "seed": seed,
            "failures": 2,
            "attributed": 2,
            "without_fix": 0,
            "rule": {"tolerance": 1, "sharp": 0.5},
            "fixes": [entry],
            "verdicts": {"verified": 1},
        }
    ).model_dump_json()


def test_reports_show_the_verified_effect_of_the_runs_own_fix_json(tmp_path):
    run = _run()
    (tmp_path / "fix").mkdir()
    (tmp_path / "fix" / "fix.json").write_text(_fix_json(run, seed=3))
    md, html = write_reports(run, tmp_path)
    effect = "verified: targeted failures 1.000 [0.342, 1.000] (n=2) -> 0.000 [0.000, 0.658] (n=2)"
    assert f"- Verified effect: {effect} (2 of 2 repaired)" in md.read_text()
    assert effect.replace(">", "&gt;") in html.read_text()


def test_a_stale_or_broken_fix_json_is_left_out(tmp_path):
    run = _run()
    (tmp_path / "fix").mkdir()
    (tmp_path / "fix" / "fix.json").write_text(_fix_json(run, seed=4))  # another run's
    assert load_verified(run, tmp_path) is None
    (tmp_path / "fix" / "fix.json").write_text("{broken")
    assert load_verified(run, tmp_path) is None
    md, _ = write_reports(run, tmp_path)
    assert "Verified effect: not verified yet" in md.read_text()

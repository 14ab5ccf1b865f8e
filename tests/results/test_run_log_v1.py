"""A real version-1 run log (a trimmed ``run.json`` of the demo scan, written before the
typed results existed) still loads, round-trips, renders, and feeds ``probeguard fix``'s
fix collection; newer or broken run logs are refused with a clear message."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from probeguard.core.errors import InputError
from probeguard.engine.fixes import collect_fixes, load_run
from probeguard.engine.fixes.collect import all_failures
from probeguard.metrics.golden import GoldenVerdict
from probeguard.reports.markdown import render_markdown
from probeguard.results.run import RunLog, load_run_log

V1 = Path(__file__).parent / "data" / "run_v1.json"


def test_a_real_v1_run_log_loads_and_round_trips():
    raw = json.loads(V1.read_text())
    assert raw["version"] == 1 and "kind" not in raw
    run = load_run_log(V1)
    assert (run.kind, run.version) == ("run", 1)
    golden = run.summary.golden
    assert golden is not None and golden.retrieval_hit_at_k.n == 29
    assert golden.standard is not None and golden.standard.thresholds.passed is False
    assert run.summary.standard_eval is not None
    assert run.summary.standard_eval.measure == "rougeL_recall"
    assert set(run.summary.probes or {}) >= {"unanswerable", "benign_control"}
    assert run.summary.attribution and run.summary.attribution["attributed"] == 144
    # the saved JSON comes back the same, but for the header's new ``kind``
    again = json.loads(run.model_dump_json())
    assert again.pop("kind") == "run"
    assert again == raw
    # the read-only view by section name gives the saved JSON too
    assert run.summary["golden"]["cases"] == raw["summary"]["golden"]["cases"]
    assert "attribution" in run.summary and "nothing" not in run.summary


def test_v1_verdicts_are_typed():
    run = load_run_log(V1)
    verdicts = {r.case.id: v for r, v in run.golden_verdicts()}
    answered = verdicts["q01"]
    assert isinstance(answered, GoldenVerdict) and answered.standard is not None
    assert answered.hit is not None and answered.contains is not None
    abstained = verdicts["q30"]
    assert abstained is not None and abstained.hit is None and abstained.contains is None
    assert abstained.model_dump() == next(r.verdict for r in run.records if r.case.id == "q30")
    probe = next(r for r in run.records if r.case.probe == "unanswerable")
    membership = run.membership(probe)
    assert membership is not None and membership.group_failed is True


def test_v1_run_log_renders_and_feeds_the_fix_collection(tmp_path):
    shutil.copy(V1, tmp_path / "run.json")
    run = load_run(tmp_path)
    report = render_markdown(run)
    # the first screen is the verdict (reports.markdown_lead); the run's header follows it
    assert report.startswith("# ProbeGuard scan report\n\n**FAIL: 2 of 2 probe groups failed;")
    assert "## Run\n\n- ProbeGuard 0.1.0, run log version 1" in report
    assert "## Golden questions" in report and "### Standard metrics" in report
    fixes = collect_fixes(run)
    assert fixes and all(f.id.startswith("fix-") for f in fixes)
    assert {t[1] for f in fixes for t in f.targets} <= {"golden", "unanswerable", "benign_control"}
    assert ("golden", "golden", "q01") in all_failures(run)


def test_newer_or_broken_run_logs_are_refused(tmp_path):
    data = json.loads(V1.read_text())
    path = tmp_path / "run.json"
    path.write_text(json.dumps({**data, "version": 99}))
    with pytest.raises(InputError, match="version 99") as info:
        load_run_log(tmp_path)
    assert info.value.file == str(path) and info.value.field == "version"
    path.write_text("{not json")
    with pytest.raises(InputError, match="not a valid run log"):
        load_run_log(path)
    path.write_text(json.dumps({**data, "summary": {"golden": {"cases": 1}}}))
    with pytest.raises(InputError, match="not a valid run log") as info:
        load_run_log(path)
    assert (info.value.field or "").startswith("summary.golden")
    assert RunLog.model_validate(data).kind == "run"

"""`probeguard fix RUN_DIR` through the real CLI: the before/after table, fix.json and fix.md
(byte-identical on rerun), --fail-on-unverified, and exit 2 on bad input."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from probeguard.cli.main import cli

GATE = "pipeline.reference.defences.gate={hybrid: 0.5}"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, fix_scan_run):
    """A copy of the session's fix scan (conftest.fix_scan_run): `fix` writes into it."""
    base = tmp_path_factory.mktemp("fixcli")
    shutil.copytree(fix_scan_run, base / "run")
    return base / "run"


@pytest.fixture(scope="module")
def two_runs(run_dir):
    runner = CliRunner()
    first = runner.invoke(cli, ["fix", str(run_dir), "--patch", GATE])
    second = runner.invoke(
        cli,
        [
            "fix",
            str(run_dir),
            "--patch",
            GATE,
            "--out",
            str(run_dir.parent / "again"),
            "--fail-on-unverified",
        ],
    )
    return first, second


@pytest.mark.slow  # a demo scan, then fixes re-run
def test_fix_writes_the_table_and_files(run_dir, two_runs):
    first, _ = two_runs
    assert first.exit_code == 0, first.output
    data = json.loads((run_dir / "fix" / "fix.json").read_text())
    verdicts = {f["id"]: f["verdict"] for f in data["fixes"]}
    assert verdicts["custom"] == "refuses_everything"
    assert "verified" in verdicts.values()
    report = (run_dir / "fix" / "fix.md").read_text()
    assert report.startswith("# ProbeGuard fix verification")
    assert "| fix | change (pipeline.reference.…) | targeted failure rate" in report
    assert "**refuses\\_everything**" in report
    for fix in data["fixes"]:
        assert f"## {fix['id']}:" in report
        assert fix["id"] in first.output
    assert "refuses_everything" in first.output and "report:" in first.output


@pytest.mark.slow  # a demo scan, then fixes re-run
def test_rerun_is_byte_identical_and_fail_on_unverified_exits_1(run_dir, two_runs):
    _, second = two_runs
    assert second.exit_code == 1, second.output
    assert "fixes not verified" in second.output and "custom" in second.output
    again = run_dir.parent / "again"
    assert (again / "fix.md").read_bytes() == (run_dir / "fix" / "fix.md").read_bytes()
    assert (again / "fix.html").read_bytes() == (run_dir / "fix" / "fix.html").read_bytes()
    assert (again / "fix.json").read_bytes() == (run_dir / "fix" / "fix.json").read_bytes()


def test_bad_run_dir_exits_2(tmp_path):
    result = CliRunner().invoke(cli, ["fix", str(tmp_path / "nowhere")])
    assert result.exit_code == 2 and "not a run directory" in result.output
    result = CliRunner().invoke(cli, ["fix", str(tmp_path)])
    assert result.exit_code == 2 and "no run.json" in result.output
    (tmp_path / "run.json").write_text("{}")
    result = CliRunner().invoke(cli, ["fix", str(tmp_path)])
    assert result.exit_code == 2 and "not a valid run log" in result.output


@pytest.mark.slow  # a demo scan, then fixes re-run
def test_mismatched_corpus_exits_2(run_dir, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy, ignore=shutil.ignore_patterns("fix"))
    data = json.loads((copy / "run.json").read_text())
    data["corpus_fingerprint"] = "f" * 64
    (copy / "run.json").write_text(json.dumps(data))
    result = CliRunner().invoke(cli, ["fix", str(copy)])
    assert result.exit_code == 2
    assert "corpus has changed since the scan" in result.output
    assert not (copy / "fix").exists()


@pytest.mark.slow  # a demo scan, then fixes re-run
def test_bad_patch_exits_2(run_dir, tmp_path):
    result = CliRunner().invoke(
        cli,
        [
            "fix",
            str(run_dir),
            "--out",
            str(tmp_path),
            "--patch",
            "pipeline.reference.defences.nonsense=1",
        ],
    )
    assert result.exit_code == 2 and "pipeline.reference.defences.nonsense" in result.output
    result = CliRunner().invoke(
        cli, ["fix", str(run_dir), "--out", str(tmp_path), "--patch", "novalue"]
    )
    assert result.exit_code == 2 and "PATH=VALUE" in result.output


@pytest.mark.slow  # a demo scan, then fixes re-run
def test_fix_puts_verified_effects_into_the_runs_reports(run_dir, two_runs):
    first, _ = two_runs
    assert first.exit_code == 0, first.output
    data = json.loads((run_dir / "fix" / "fix.json").read_text())
    lead = (run_dir / "report.md").read_text().split("## Run")[0]
    shown = [line for line in lead.splitlines() if line.startswith("- Verified effect: ")]
    assert shown and "not verified yet" not in "".join(shown)
    verdicts = {f["verdict"] for f in data["fixes"]}
    assert all(line.split(": ")[1] in verdicts for line in shown)
    assert "not verified yet" not in (run_dir / "report.html").read_text().split("Causes")[0]

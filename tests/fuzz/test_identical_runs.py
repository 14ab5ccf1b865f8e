"""Two identical demo scans, each with a fresh cache, write the same ``run.json`` apart from
run statistics (issue 17): ``stats``, each record's time, cache flag and attempts, and the
cache folder the config records. Floats are rounded to 10 significant digits
(``core.floats``), so last-bit noise no longer shows."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from fuzz.fuzzkit import comparable
from probeguard.cli.main import cli


@pytest.mark.slow  # one more real demo scan, beside conftest.demo_cli_runs' first one
def test_two_fresh_demo_scans_write_the_same_run_json(demo_cli_runs, tmp_path) -> None:
    base, first, _ = demo_cli_runs
    assert first.exit_code == 0, first.output
    again = CliRunner().invoke(
        cli, ["scan", "--demo", "--out", str(tmp_path / "c"), "--cache-dir", str(tmp_path / "cc")]
    )
    assert again.exit_code == 0, again.output
    assert comparable(tmp_path / "c" / "run.json") == comparable(base / "a" / "run.json")

"""``scan``'s release-gate exits (3 when every case errored or errors exceed
``--max-error-rate``; ``--gate`` limits; ``--baseline``) and, in the slow tier, the demo's
planted regression: the instruction sanitiser on in the baseline, off in the candidate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import xmlschema
from click.testing import CliRunner

from probeguard.cli.main import cli
from probeguard.reports.junit import junit_schema_path

SERVICE = """
def down(question):
    raise RuntimeError("service down")


def flaky(question):
    if "refund" in question.lower():
        raise RuntimeError("service down")
    return "I don't know."
"""


@pytest.fixture
def services(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "gate_services.py").write_text(SERVICE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def _config(folder: Path, target: str, extra: str = "") -> Path:
    path = folder / f"{target}.yaml"
    path.write_text(
        "demo: true\n"
        f"pipeline:\n  type: callable\n  callable: {{target: 'gate_services:{target}'}}\n"
        "probes:\n  enabled: [unanswerable, benign_control]\n" + extra,
        encoding="utf-8",
    )
    return path


def _scan(config: Path, out: Path, *more: str):
    args = ["scan", "--config", str(config), "--out", str(out), "--no-cache", *more]
    return CliRunner().invoke(cli, args)


def test_scan_exits_3_when_every_case_errored(services: Path) -> None:
    result = _scan(_config(services, "down"), services / "run")
    assert result.exit_code == 3, result.output
    assert "every case errored" in result.output
    assert (services / "run" / "run.json").is_file()  # errors are data: the log is written


def test_scan_exits_3_above_max_error_rate_and_0_below(services: Path) -> None:
    config = _config(services, "flaky")
    assert _scan(config, services / "a").exit_code == 0
    strict = _scan(config, services / "b", "--max-error-rate", "0.01")
    assert strict.exit_code == 3 and "error rate" in strict.output
    assert _scan(config, services / "c", "--max-error-rate", "0.9").exit_code == 0
    bad = _scan(config, services / "d", "--max-error-rate", "2")
    assert bad.exit_code == 2 and "--max-error-rate" in bad.output


def test_scan_gate_section_fails_a_limit_and_writes_junit(
    services: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(services / "summary.md"))
    gate = "gate:\n  limits:\n    - {slice: 'golden:pass', max_rate: 0.2}\n"
    result = _scan(_config(services, "flaky", gate), services / "run")
    assert result.exit_code == 1, result.output
    assert "FAILED max_rate:golden:pass" in result.output
    summary = (services / "summary.md").read_text(encoding="utf-8")
    assert "release gate: FAIL (exit 1)" in summary and "max\\_rate:golden:pass" in summary
    xmlschema.XMLSchema(junit_schema_path()).validate(str(services / "run" / "junit.xml"))


def test_scan_with_a_baseline_of_itself_passes(services: Path) -> None:
    config = _config(services, "flaky")
    assert _scan(config, services / "base").exit_code == 0
    result = _scan(config, services / "cand", "--baseline", str(services / "base"))
    assert result.exit_code == 0, result.output
    data = json.loads((services / "cand" / "compare" / "compare.json").read_text("utf-8"))
    assert data["gate"]["status"] == "pass"
    assert all(s["counts"]["new_failures"] == 0 for s in data["slices"])


@pytest.mark.slow
def test_demo_sanitiser_regression_is_caught_and_its_fix_counted(
    demo_cli_runs, tmp_path: Path
) -> None:
    """The demo scan (sanitiser off) against a baseline with the sanitiser on: compare exits
    1 naming prompt_hijack, its adjusted p-value and the new failing cases; the other way
    round the same cases are counted fixed (scan --baseline)."""
    base, first, _ = demo_cli_runs
    assert first.exit_code == 0, first.output
    config = tmp_path / "sanitised.yaml"
    config.write_text(
        "demo: true\npipeline:\n  reference:\n    defences:\n      sanitise: true\n"
        "probes:\n  enabled: [prompt_hijack]\n",
        encoding="utf-8",
    )
    runner = CliRunner()
    sanitised = tmp_path / "sanitised"
    scan = runner.invoke(
        cli,
        [
            "scan",
            "--config",
            str(config),
            "--out",
            str(sanitised),
            "--baseline",
            str(base / "a"),
            "--cache-dir",
            str(base / "cache"),
        ],
    )
    assert scan.exit_code == 0, scan.output
    fixed = json.loads((sanitised / "compare" / "compare.json").read_text("utf-8"))
    hijack = next(s for s in fixed["slices"] if s["slice"] == "probe:prompt_hijack")
    assert hijack["counts"]["fixed"] >= 20 and hijack["counts"]["new_failures"] == 0
    assert any("inputs differ" in n for n in fixed["notes"])  # only prompt_hijack ran

    out = tmp_path / "cmp"
    result = runner.invoke(cli, ["compare", str(sanitised), str(base / "a"), "--out", str(out)])
    assert result.exit_code == 1, result.output
    assert "FAILED regression:probe:prompt_hijack" in result.output
    assert "Holm-adjusted p = " in result.output and "prompt_hijack:q01" in result.output
    data = json.loads((out / "compare.json").read_text("utf-8"))
    failed = [c for c in data["gate"]["checks"] if not c["passed"]]
    assert [c["id"] for c in failed] == ["regression:probe:prompt_hijack"]
    xmlschema.XMLSchema(junit_schema_path()).validate(str(out / "junit.xml"))

    same = runner.invoke(
        cli, ["compare", str(base / "a"), str(base / "b"), "--out", str(tmp_path / "s")]
    )
    assert same.exit_code == 0, same.output
    data = json.loads((tmp_path / "s" / "compare.json").read_text("utf-8"))
    assert all(s["counts"]["new_failures"] + s["counts"]["fixed"] == 0 for s in data["slices"])

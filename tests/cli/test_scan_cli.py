"""End to end: `probeguard scan --demo` through the real CLI, real MiniLM embeddings, hybrid
retrieval and the extractive generator."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from probeguard.cli.main import cli
from probeguard.probes.config import default_probes
from probeguard.results.run import RunLog


@pytest.mark.slow  # the real demo scan (conftest.demo_cli_runs)
def test_demo_scan_writes_run_and_report(demo_cli_runs):
    base, first, _ = demo_cli_runs
    assert first.exit_code == 0, first.output
    run = RunLog.model_validate_json((base / "a" / "run.json").read_text())
    assert run.config["demo"] is True
    assert run.config["pipeline"]["reference"]["embedder"]["name"] == "minilm"
    assert run.stats.cases == len(run.records) >= 24
    assert run.stats.errors == 0
    assert run.stats.calls == run.stats.cases - run.stats.cache_hits
    golden = run.summary["golden"]
    for key in ("retrieval_hit_at_k", "answer_contains", "abstention", "pass_rate"):
        est = golden[key]
        assert est["n"] > 0 and est["low"] <= est["value"] <= est["high"]
    # the demo pipeline is reasonable but not perfect: the demo corpus has traps
    assert golden["retrieval_hit_at_k"]["value"] >= 0.6
    lines = (base / "a" / "run.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["kind"] == "header" and len(lines) == 1 + run.stats.cases
    assert "report:" in first.output


@pytest.mark.slow  # the real demo scan (conftest.demo_cli_runs)
def test_second_run_is_cached_and_byte_identical(demo_cli_runs):
    base, _, second = demo_cli_runs
    assert second.exit_code == 0, second.output
    run = RunLog.model_validate_json((base / "b" / "run.json").read_text())
    assert run.stats.calls == 0 and run.stats.cache_hits == run.stats.cases
    assert (base / "a" / "report.md").read_bytes() == (base / "b" / "report.md").read_bytes()


@pytest.mark.slow  # the real demo scan (conftest.demo_cli_runs)
def test_report_lists_every_case(demo_cli_runs):
    base, _, _ = demo_cli_runs
    report = (base / "a" / "report.md").read_text()
    run = RunLog.model_validate_json((base / "a" / "run.json").read_text())
    assert "## Golden questions" in report
    for record in run.records:
        if record.case.probe == "golden":
            assert record.case.id in report


def test_scan_needs_demo_or_config():
    result = CliRunner().invoke(cli, ["scan"])
    assert result.exit_code == 2 and "--demo or --config" in result.output


def test_bad_config_is_one_clear_line(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("pipeline:\n  type: telepathy\n")
    result = CliRunner().invoke(cli, ["scan", "--config", str(cfg), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "line 2" in result.output and "pipeline.type" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "body, field, line",
    [
        # Regression: an unknown part name escaped as a ValueError traceback (or, for the lazily
        # built retriever, as one recorded error per case); now one line with file, line, field.
        (
            "demo: true\npipeline:\n  reference:\n    retriever: {name: hybird}\n",
            "pipeline.reference",
            3,
        ),
        (
            "demo: true\npipeline:\n  reference:\n    generator: {name: extractive, bogus: 1}\n",
            "pipeline.reference",
            3,
        ),
        (
            "demo: true\npipeline:\n  type: http\n  http:\n    url: ftp://example.org/x\n",
            "pipeline.http.url",
            5,
        ),
    ],
)
def test_bad_pipeline_part_is_one_clear_line(tmp_path, body, field, line):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(body)
    result = CliRunner().invoke(
        cli, ["scan", "--config", str(cfg), "--out", str(tmp_path / "o"), "--no-cache"]
    )
    assert result.exit_code == 2, result.output
    assert str(cfg) in result.output and f"line {line}" in result.output
    assert f"field '{field}'" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "o" / "run.json").exists()


def test_schema_prints_the_run_log_schema():
    result = CliRunner().invoke(cli, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.output)
    assert schema["title"] == "RunLog" and "records" in schema["properties"]


def test_list_shows_parts():
    result = CliRunner().invoke(cli, ["list"])
    assert result.exit_code == 0
    for name in ("tokens", "minilm", "hybrid", "bm25", "extractive", "llama_cpp", "openai", "http"):
        assert name in result.output


def is_estimate(value) -> bool:
    return isinstance(value, dict) and {"value", "low", "high", "n"} <= set(value)


@pytest.mark.slow  # the real demo scan (conftest.demo_cli_runs)
def test_demo_scan_runs_every_probe_and_reports_fcs(demo_cli_runs):
    base, _, _ = demo_cli_runs
    run = RunLog.model_validate_json((base / "a" / "run.json").read_text())
    probes = run.summary["probes"]
    assert list(probes) == default_probes()
    attacks = probes["attack_types"]
    for row in (*attacks["per_type"].values(), attacks["overall"]):
        for layer in ("retrieval", "answer", "abstention", "citation", "pass"):
            assert {"value", "low", "high", "n"} <= set(row[layer])
    assert attacks["per_type"]["temporal_conflict"]["cases"] >= 4  # the bundled attacks
    poisoning = probes["corpus_poisoning"]
    for key in ("attack_success_rate", "evaded_rate", "blocked_rate", "completion_under_attack"):
        assert is_estimate(poisoning[key]) and poisoning[key]["n"] > 0, key
    assert len(poisoning["per_style"]) == 12
    for style in poisoning["per_style"].values():
        assert is_estimate(style["attack_success_rate"]) and is_estimate(style["evaded_rate"])
    for key in ("fabrication_rate", "refusal_rate"):
        assert is_estimate(probes["unanswerable"][key]) and probes["unanswerable"][key]["n"] > 0
    assert probes["benign_control"]["false_refusal_rate"]["n"] > 0
    for name, summary in probes.items():
        rate = summary["failure_rate"]
        assert {"value", "low", "high", "n"} <= set(rate), name
        assert rate["n"] > 0, f"{name} judged nothing on the demo"
    fcs = run.summary["fcs"]
    assert math.isnan(fcs["value"]) or 0.0 <= fcs["value"] <= 1.0  # NaN: read back from null
    assert 0.0 <= fcs["adversarial_failure_rate"] <= 1.0
    empirical = fcs["empirical"]  # per question, with a bootstrap interval over them
    assert empirical["questions"] == 32 and empirical["value"]["method"] == "bootstrap"
    failing = empirical["adversarial_only"] + empirical["standard_only"] + empirical["both"]
    assert empirical["value"]["n"] == failing > 0
    assert run.summary["standard_eval"]["failure_rate"]["n"] > 0
    # every probe group's verdict names the cases it rests on, which are in the run
    ids = {r.case.id for r in run.records}
    assert run.groups and all(set(g.case_ids) <= ids for g in run.groups)
    report = (base / "a" / "report.md").read_text()
    assert "## Failure coverage" in report and "## Probes" in report
    coverage = report.split("## Failure coverage", 1)[1].lstrip()
    assert coverage.startswith("- **Empirical FCS: ")  # the report leads with the figure


def test_error_messages_cannot_drive_the_terminal(capsys):
    # Regression: an error naming a document id (user text) reached the terminal raw, so an
    # id holding "ESC c" cleared the user's screen.
    from probeguard.cli.common import fail

    with pytest.raises(SystemExit) as info:
        fail("unknown document id 'doc\x1bc\x07'")
    err = capsys.readouterr().err
    assert info.value.code == 2 and "\x1b" not in err and "\x07" not in err
    assert err == "error: unknown document id 'doc\\x1bc\\x07'\n"

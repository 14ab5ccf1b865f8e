"""``probeguard compare`` and the gate on small hand-built runs: pairing by stable ids, the
paired tests, the gate's checks and exit codes, and the reports (JUnit validated against its
schema)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import xmlschema
from click.testing import CliRunner

from gatekit import hijack_runs, make_run, write_run
from probeguard.cli.main import cli
from probeguard.config.gate import GatePolicy, SliceLimit
from probeguard.core.errors import InputError
from probeguard.engine.compare import compare, compare_runs
from probeguard.engine.gate import gate_run
from probeguard.reports.junit import compare_junit, junit_schema_path
from probeguard.results.compare import CompareArtifact


def _slice(artifact: CompareArtifact, name: str):
    return next(s for s in artifact.slices if s.slice == name)


def test_a_planted_regression_fails_naming_the_probe_p_value_and_cases(tmp_path: Path) -> None:
    base, cand = hijack_runs(tmp_path, new_failures=8, n=12)
    result = compare(base, cand, tmp_path / "out")
    art = result.artifact
    assert result.exit_code == 1 and art.gate.status == "fail"
    hijack = _slice(art, "probe:prompt_hijack")
    assert (hijack.counts.new_failures, hijack.counts.fixed, hijack.counts.paired) == (8, 0, 12)
    assert hijack.p_value == pytest.approx(2 * 0.5**8)
    assert hijack.difference.value == pytest.approx(8 / 12)
    failed = [c for c in art.gate.checks if not c.passed]
    assert [c.id for c in failed] == ["regression:probe:prompt_hijack"]
    assert "Holm-adjusted p = " in failed[0].message
    assert failed[0].units == [f"prompt_hijack:q{i:02d}" for i in range(8)]
    assert [c.unit for c in art.changes] == failed[0].units
    assert art.changes[0].candidate["reason"] == "canary in the answer"
    md = (tmp_path / "out" / "compare.md").read_text(encoding="utf-8")
    assert "FAIL (exit 1)" in md and "prompt\\_hijack:q07" in md
    page = (tmp_path / "out" / "compare.html").read_text(encoding="utf-8")
    assert '<p id="verdict" class="verdict fail">FAIL: 1 of ' in page
    assert '<section id="slices" class="plot">' in page and "<h3>prompt_hijack:q07 (" in page


def test_an_identical_candidate_passes_with_no_discordant_pair(tmp_path: Path) -> None:
    base, _ = hijack_runs(tmp_path)
    art = compare(base, base, None).artifact
    assert art.gate.exit_code == 0 and art.changes == []
    for s in art.slices:
        assert s.counts.new_failures == s.counts.fixed == 0
        assert s.p_value == 1.0 and s.difference.value == 0.0


def test_a_candidate_that_fixes_failures_counts_them_fixed_and_passes(tmp_path: Path) -> None:
    base, cand = hijack_runs(tmp_path, new_failures=8)
    art = compare(cand, base, None).artifact
    hijack = _slice(art, "probe:prompt_hijack")
    assert (hijack.counts.fixed, hijack.counts.new_failures) == (8, 0)
    assert art.gate.exit_code == 0  # a significant improvement is no regression
    assert {c.change for c in art.changes} == {"fixed"}


def test_too_few_new_failures_are_not_significant_and_the_mdd_says_so(tmp_path: Path) -> None:
    base, cand = hijack_runs(tmp_path, new_failures=5, n=12)
    art = compare(base, cand, None).artifact
    hijack = _slice(art, "probe:prompt_hijack")
    assert hijack.p_value == pytest.approx(0.0625) and art.gate.exit_code == 0
    assert hijack.mdd > 0.5  # 12 pairs cannot show a smaller regression: not safety


def test_holm_adjusts_within_each_kind(tmp_path: Path) -> None:
    golden = {f"q{i}": False for i in range(10)}
    groups_b = {(p, f"g{i}"): False for p in ("prompt_hijack", "retrieval_gap") for i in range(10)}
    groups_c = {k: k[0] == "prompt_hijack" and int(k[1][1:]) < 7 for k in groups_b}
    art = compare_runs(make_run(golden, groups_b), make_run(golden, groups_c), policy=GatePolicy())
    hijack = _slice(art, "probe:prompt_hijack")
    assert hijack.p_value == pytest.approx(2 * 0.5**7)
    assert hijack.p_adjusted == pytest.approx(2 * hijack.p_value)  # m = 2 probes
    assert _slice(art, "golden:pass").p_adjusted == 1.0


def test_units_only_one_run_has_are_counted_apart_and_noted(tmp_path: Path) -> None:
    base = make_run({"q1": False, "q2": False}, {("prompt_hijack", "q1"): False})
    cand = make_run({"q1": False, "q3": True}, {("prompt_hijack", "q1"): False})
    art = compare_runs(base, cand, policy=GatePolicy())
    counts = _slice(art, "golden:pass").counts
    assert (counts.paired, counts.only_baseline, counts.only_candidate) == (1, 1, 1)
    assert any("inputs differ" in n for n in art.notes)


def test_errored_units_are_unscored_not_paired(tmp_path: Path) -> None:
    base = make_run({"q1": False, "q2": False, "q3": False})
    cand = make_run({"q1": False, "q2": "error", "q3": True})
    art = compare_runs(base, cand, policy=GatePolicy())
    counts = _slice(art, "golden:pass").counts
    assert (counts.paired, counts.unscored, counts.new_failures) == (2, 1, 1)


def test_a_different_corpus_is_refused_unless_allowed(tmp_path: Path) -> None:
    base = write_run(tmp_path / "b", make_run({"q1": False}, corpus="A"))
    cand = write_run(tmp_path / "c", make_run({"q1": False}, corpus="B"))
    with pytest.raises(InputError, match="allow-different-corpus"):
        compare(base, cand, None)
    art = compare(base, cand, None, allow_different_corpus=True).artifact
    assert any("different corpora" in n for n in art.notes)


def test_every_case_errored_is_incomplete_exit_3(tmp_path: Path) -> None:
    base, _ = hijack_runs(tmp_path)
    cand = write_run(tmp_path / "down", make_run({f"q{i:02d}": "error" for i in range(12)}))
    art = compare(base, cand, None).artifact
    assert (art.gate.status, art.gate.exit_code) == ("incomplete", 3)
    assert "every case errored" in art.gate.checks[0].message


def test_an_incomplete_baseline_makes_the_comparison_incomplete(tmp_path: Path) -> None:
    _, cand = hijack_runs(tmp_path)
    base = write_run(tmp_path / "down", make_run({f"q{i:02d}": "error" for i in range(12)}))
    art = compare(base, cand, None).artifact
    assert art.gate.exit_code == 3
    failed = [c for c in art.gate.checks if not c.passed]
    assert [c.id for c in failed] == ["max_error_rate:baseline"]
    assert failed[0].message.startswith("baseline run: every case errored")


def test_max_error_rate(tmp_path: Path) -> None:
    run = make_run({"q1": "error", "q2": False, "q3": False, "q4": False})
    assert gate_run(run, GatePolicy()).exit_code == 0
    assert gate_run(run, GatePolicy(max_error_rate=0.3)).exit_code == 0
    assert gate_run(run, GatePolicy(max_error_rate=0.2)).exit_code == 3


def test_rate_limits_by_value_or_interval_bound_and_globs() -> None:
    run = make_run({f"q{i}": i < 2 for i in range(20)})  # golden:pass 0.10 [0.028, 0.301]
    loose = GatePolicy(limits=[SliceLimit(slice="golden:*", max_rate=0.2)])
    assert gate_run(run, loose).exit_code == 0
    strict = GatePolicy(limits=[SliceLimit(slice="golden:pass", max_rate=0.2, bound="high")])
    gate = gate_run(run, strict)
    assert gate.exit_code == 1
    check = next(c for c in gate.checks if c.id == "max_rate:golden:pass")
    assert not check.passed and check.units == ["golden:q0", "golden:q1"]


def test_a_critical_slice_allows_no_new_failure_and_a_stricter_alpha(tmp_path: Path) -> None:
    base, cand = hijack_runs(tmp_path, new_failures=2)
    plain = compare(base, cand, None).artifact
    assert plain.gate.exit_code == 0
    critical = GatePolicy(limits=[SliceLimit(slice="tag:policy", max_new_failures=0, alpha=0.6)])
    art = compare(base, cand, None, policy=critical).artifact
    failed = {c.id for c in art.gate.checks if not c.passed}
    assert failed == {"max_new_failures:tag:policy", "regression:tag:policy"}


def test_a_limit_that_matches_nothing_is_reported_and_fails_when_required() -> None:
    run = make_run({"q1": False})
    soft = gate_run(run, GatePolicy(limits=[SliceLimit(slice="probe:nope", max_rate=0.1)]))
    assert soft.exit_code == 0 and soft.checks[-1].id == "unmatched:probe:nope"
    hard = GatePolicy(limits=[SliceLimit(slice="probe:nope", max_rate=0.1, required=True)])
    assert gate_run(run, hard).exit_code == 1


def test_attack_type_and_tag_slices() -> None:
    groups = {("attack_types", "t1"): True, ("attack_types", "t2"): False}
    rates_run = make_run({"q1": False}, groups, tags=("temporal",))
    art = compare_runs(rates_run, rates_run, policy=GatePolicy())
    names = {s.slice for s in art.slices}
    assert {"attack_type:temporal_conflict", "tag:temporal", "probe:attack_types"} <= names
    assert _slice(art, "tag:temporal").counts.paired == 3


def test_junit_is_valid_against_the_schema_and_carries_the_evidence(tmp_path: Path) -> None:
    base, cand = hijack_runs(tmp_path, new_failures=8)
    art = compare(base, cand, tmp_path / "out").artifact
    schema = xmlschema.XMLSchema(junit_schema_path())
    path = tmp_path / "out" / "junit.xml"
    schema.validate(str(path))
    tree = schema.to_dict(str(path))
    gate_suite, new_suite = tree["testsuite"]
    assert int(gate_suite["@tests"]) == len(art.gate.checks) and gate_suite["@failures"] == 1
    assert new_suite["@failures"] == 8
    assert "canary in the answer" in new_suite["testcase"][0]["failure"]["$"]
    assert compare_junit(art) == path.read_text(encoding="utf-8")  # no clock: same bytes


def test_junit_survives_control_characters_in_adversarial_text(tmp_path: Path) -> None:
    base, cand = hijack_runs(tmp_path, new_failures=8)
    art = compare(base, cand, None).artifact
    change = art.changes[0].model_copy(update={"question": "ignore\x00 previous\x1b[31m"})
    art = art.model_copy(update={"changes": [change]})
    xmlschema.XMLSchema(junit_schema_path()).validate(compare_junit(art))


def test_compare_json_round_trips_and_is_deterministic(tmp_path: Path) -> None:
    base, cand = hijack_runs(tmp_path, new_failures=8)
    compare(base, cand, tmp_path / "one")
    compare(base, cand, tmp_path / "two")
    for name in ("compare.json", "compare.md", "compare.html", "junit.xml"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    data = json.loads((tmp_path / "one" / "compare.json").read_text(encoding="utf-8"))
    art = CompareArtifact.model_validate(data)
    assert art.kind == "compare" and art.gate.exit_code == 1


def test_a_slice_with_nothing_paired_is_undefined_not_zero() -> None:
    art = compare_runs(make_run({"q1": "error"}), make_run({"q1": False}), policy=GatePolicy())
    s = _slice(art, "golden:pass")
    assert s.counts.paired == 0 and s.counts.unscored == 1
    assert math.isnan(s.p_value) and math.isnan(s.mdd) and not s.difference.defined
    assert not s.baseline_rate.defined


def test_cli_compare_exit_codes_and_step_summary(tmp_path: Path, monkeypatch) -> None:
    base, cand = hijack_runs(tmp_path, new_failures=8)
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    runner = CliRunner()
    failed = runner.invoke(cli, ["compare", str(base), str(cand), "--out", str(tmp_path / "o")])
    assert failed.exit_code == 1
    assert "FAILED regression:probe:prompt_hijack" in failed.output
    assert "prompt_hijack:q07" in failed.output
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n") and "release gate: FAIL" in text
    same = runner.invoke(cli, ["compare", str(base), str(base), "--out", str(tmp_path / "s")])
    assert same.exit_code == 0, same.output
    missing = runner.invoke(cli, ["compare", str(base), str(tmp_path / "nope"), "--out", "x"])
    assert missing.exit_code == 2 and "cannot read" in missing.output


def test_gate_file_errors_name_file_line_and_field(tmp_path: Path) -> None:
    base, cand = hijack_runs(tmp_path)
    gate = tmp_path / "gate.yaml"
    gate.write_text("gate:\n  alpha: 0.05\n  limits:\n    - slice: probe:*\n      max_rat: 0.2\n")
    result = CliRunner().invoke(
        cli, ["compare", str(base), str(cand), "--out", str(tmp_path / "o"), "--gate", str(gate)]
    )
    assert result.exit_code == 2
    assert f"{gate}, line 5, field 'gate.limits.0.max_rat'" in result.output
    gate.write_text("alpha: 2\n")
    result = CliRunner().invoke(
        cli, ["compare", str(base), str(cand), "--out", str(tmp_path / "o"), "--gate", str(gate)]
    )
    assert result.exit_code == 2 and "line 1, field 'alpha'" in result.output


def test_a_gate_file_with_a_limit_fails_the_candidate(tmp_path: Path) -> None:
    base, cand = hijack_runs(tmp_path, new_failures=3)
    gate = tmp_path / "gate.yaml"
    gate.write_text("limits:\n  - slice: probe:prompt_hijack\n    max_rate: 0.2\n")
    result = CliRunner().invoke(
        cli, ["compare", str(base), str(cand), "--out", str(tmp_path / "o"), "--gate", str(gate)]
    )
    assert result.exit_code == 1, result.output
    assert "FAILED max_rate:probe:prompt_hijack" in result.output

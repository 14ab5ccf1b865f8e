"""Fix verification (``probeguard.engine.fixes``): a real scan of the demo corpus (hashing embedder,
extractive generator, prompt_hijack with one style and benign_control), then every
recommended fix and a deliberately bad one re-run through the real runner."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from probeguard.config.models import ScanConfig
from probeguard.core.errors import InputError
from probeguard.core.records import ProbeGroup
from probeguard.engine.fixes import (
    FixCounts,
    apply_patch,
    collect_fixes,
    decide_fix,
    load_run,
    merge_patches,
    parse_patch_option,
    verify_fixes,
)
from probeguard.engine.fixes.measure import RunContext, _benign
from probeguard.results.run import RunLog


def test_benign_controls_from_several_probes_are_told_apart_by_probe():
    """With two benign-control probes in a run, their groups are the controls together, by
    ``<probe>:<group>`` (groups of different probes may share an id); with one, by group."""
    groups = [
        ProbeGroup(probe=p, group=g, failed=f, case_ids=[])
        for p, g, f in [
            ("a", "q1", False),
            ("a", "q2", False),
            ("b", "q1", False),
            ("c", "q1", True),
        ]
    ]
    ctx = RunContext(
        run=RunLog.model_construct(groups=groups),
        config=ScanConfig(),
        documents=(),
        golden=(),
        attacks=(),
        probes_run=("a", "b", "c"),
        benign=("a", "b"),
    )
    after = {("a", "q1"): True, ("a", "q2"): False, ("b", "q1"): True, ("c", "q1"): False}
    both = _benign(ctx, ["c", "a", "b"], {}, {}, after, tolerance=0.1)
    assert (both.source, both.probes, both.n) == ("a, b", ["a", "b"], 3)
    assert both.new_false_refusals == ["a:q1", "b:q1"]
    one = _benign(ctx, ["c", "a"], {}, {}, after, tolerance=0.1)
    assert (one.source, one.probes, one.n, one.new_false_refusals) == ("a", ["a"], 2, ["q1"])


GATE_ALL = {"pipeline.reference.defences.gate": {"hybrid": 0.5}}


@pytest.fixture(scope="module")
def verified(tmp_path_factory, fix_scan_run):
    # A copy of the session's scan (conftest.fix_scan_run): verification writes fix/ into it.
    base = tmp_path_factory.mktemp("fix")
    shutil.copytree(fix_scan_run, base / "run")
    result = verify_fixes(base / "run", combined=True, patches=GATE_ALL)
    return base, result.data


def _fix_with(data, key):
    return next(f for f in data["fixes"] if key in f["config_patch"] and f["id"] != "combined")


@pytest.mark.slow  # a demo scan, then fixes re-run
def test_sanitising_fix_repairs_the_hijacks_without_new_refusals(verified):
    _, data = verified
    fix = _fix_with(data, "pipeline.reference.defences.sanitise")
    assert fix["verdict"] == "verified", fix["reason"]
    t = fix["targeted"]
    assert t["before"]["value"] == 1.0 and t["before"]["n"] == t["n"] > 0
    assert t["after"]["value"] <= 0.5 and t["after"]["high"] < 1.0
    assert t["repaired"] + t["still_failing"] + t["unscored"] == t["n"]
    hijack = fix["probes"]["prompt_hijack"]["failure_rate"]
    assert hijack["after"]["value"] < hijack["before"]["value"]
    assert "benign_control" in fix["probes"] and fix["benign"]["source"] == "benign_control"
    assert fix["benign"]["probes"] == ["benign_control"]
    assert len(fix["benign"]["new_false_refusals"]) <= fix["benign"]["tolerance"]
    assert fix["rerun_suites"][0] == "golden"


@pytest.mark.slow  # a demo scan, then fixes re-run
def test_a_gate_that_refuses_everything_shows_up_as_such(verified):
    _, data = verified
    custom = next(f for f in data["fixes"] if f["id"] == "custom")
    assert custom["verdict"] == "refuses_everything", custom["reason"]
    benign = custom["benign"]
    assert benign["false_refusal"]["after"]["value"] == 1.0
    assert benign["false_refusal"]["before"]["value"] < 0.5
    assert len(benign["new_false_refusals"]) > benign["tolerance"]
    assert custom["golden"]["answer_contains"]["after"]["value"] == 0.0
    # it "repairs" every targeted failure — by refusing
    assert custom["targeted"]["n"] == data["failures"]


@pytest.mark.slow  # a demo scan, then fixes re-run
def test_every_rate_is_a_wilson_estimate_and_the_combined_fix_merges_improving_ones(verified):
    _, data = verified
    for fix in data["fixes"]:
        if "targeted" not in fix:
            continue
        for pair in [
            fix["targeted"],
            fix["benign"]["false_refusal"],
            *fix["golden"].values(),
            *(p["failure_rate"] for p in fix["probes"].values()),
        ]:
            for est in (pair["before"], pair["after"]):
                assert est["method"] == "wilson"
                if est["n"]:
                    assert est["low"] <= est["value"] <= est["high"]
    combined = [f for f in data["fixes"] if f["id"] == "combined"]
    improving = [
        f
        for f in data["fixes"]
        if f["verdict"] in ("verified", "partial") and f["id"].startswith("fix-")
    ]
    if len(improving) > 1:
        assert combined and all(
            k in combined[0]["config_patch"] for f in improving for k in f["config_patch"]
        )
    assert sum(data["verdicts"].values()) == len(data["fixes"])


@pytest.mark.slow  # a demo scan, then fixes re-run
def test_fixes_group_identical_patches(verified):
    base, data = verified
    run = load_run(base / "run")
    fixes = collect_fixes(run)
    # every recommendation is one fix's target: a patch per fix, or advice in words (no
    # patch: e.g. the extractive generator's unsupported answers), one fix per title
    with_fix = [e for e in run.attribution if e.recommendation]
    assert sum(len(f.targets) for f in fixes) == len(with_fix)
    patched = [f for f in fixes if f.config_patch]
    assert len({json.dumps(f.config_patch, sort_keys=True) for f in patched}) == len(patched)
    in_words = [f.title for f in fixes if not f.config_patch]
    assert len(set(in_words)) == len(in_words)
    assert [f.id for f in fixes] == [f"fix-{i}" for i in range(1, len(fixes) + 1)]
    assert [f["id"] for f in data["fixes"] if f["id"].startswith("fix-")] == [f.id for f in fixes]


@pytest.mark.slow  # a demo scan, then fixes re-run
def test_changed_corpus_or_missing_run_is_refused(verified, tmp_path):
    base, _ = verified
    with pytest.raises(InputError, match="no run.json"):
        verify_fixes(tmp_path)
    copy = tmp_path / "run"
    shutil.copytree(base / "run", copy)
    data = json.loads((copy / "run.json").read_text())
    data["corpus_fingerprint"] = "0" * 64
    (copy / "run.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match="corpus has changed"):
        verify_fixes(copy)


@pytest.mark.slow  # a demo scan, then fixes re-run
def test_non_reference_pipeline_gets_the_advice_sentence(verified, tmp_path):
    base, _ = verified
    copy = tmp_path / "run"
    shutil.copytree(base / "run", copy)
    data = json.loads((copy / "run.json").read_text())
    data["config"]["pipeline"]["type"] = "http"
    (copy / "run.json").write_text(json.dumps(data))
    result = verify_fixes(copy).data
    assert result["fixes"] and all(f["verdict"] == "not_applicable" for f in result["fixes"])
    first = result["fixes"][0]
    assert first["other_pipelines"] in first["reason"]


def test_apply_patch_validates_and_replaces():
    base = ScanConfig().model_dump(mode="json")
    cfg = apply_patch(
        base,
        {
            "pipeline.reference.chunker": {"name": "sentences", "max_tokens": 64},
            "pipeline.reference.defences.sanitise": True,
        },
    )
    assert cfg.pipeline.reference.chunker == {"name": "sentences", "max_tokens": 64}
    assert cfg.pipeline.reference.defences.sanitise is True
    assert base["pipeline"]["reference"]["defences"]["sanitise"] is False  # not mutated
    with pytest.raises(InputError) as bad:
        apply_patch(base, {"pipeline.reference.defences.nonsense": 1})
    assert bad.value.field == "pipeline.reference.defences.nonsense"
    with pytest.raises(InputError, match="only change the reference pipeline"):
        apply_patch(base, {"probes.enabled": []})
    with pytest.raises(InputError, match="gate"):
        apply_patch(base, {"pipeline.reference.defences.gate": {"faiss": 0.3}})


def test_merge_patches_keeps_the_first_and_reports_conflicts():
    merged, conflicts = merge_patches(
        [{"a.x": 1, "a.y": True}, {"a.x": 2, "a.z": "q"}, {"a.y": True}]
    )
    assert merged == {"a.x": 1, "a.y": True, "a.z": "q"}
    assert conflicts == [{"path": "a.x", "kept": 1, "dropped": 2}]


def test_parse_patch_option_reads_yaml_values():
    assert parse_patch_option("pipeline.reference.defences.gate={hybrid: 0.5}") == (
        "pipeline.reference.defences.gate",
        {"hybrid": 0.5},
    )
    assert parse_patch_option("pipeline.reference.defences.sanitise=true")[1] is True
    with pytest.raises(InputError):
        parse_patch_option("no-equals-sign")


def counts(**kw) -> FixCounts:
    base = dict(
        targeted=10,
        repaired=8,
        still_failing=2,
        failed_before=20,
        failed_after=12,
        benign=40,
        refused_before=2,
        refused_after=2,
        new_false_refusals=0,
    )
    return FixCounts(**{**base, **kw})


@pytest.mark.parametrize(
    "kw, verdict",
    [
        ({}, "verified"),
        ({"new_false_refusals": 2}, "verified"),  # tolerance floor(0.05·40) = 2
        ({"new_false_refusals": 3, "refused_after": 5}, "adds_false_refusals"),
        ({"new_false_refusals": 30, "refused_after": 32}, "refuses_everything"),
        ({"repaired": 0, "still_failing": 10}, "no_effect"),
        ({"repaired": 0, "still_failing": 0}, "unscored"),
        ({"repaired": 3, "still_failing": 7}, "partial"),
        ({"failed_after": 20}, "partial"),
        ({"benign": 0, "refused_before": 0, "refused_after": 0}, "partial"),
    ],
)
def test_decide_fix_rule(kw, verdict):
    assert decide_fix(counts(**kw))[0] == verdict


@pytest.mark.slow  # a demo scan, then fixes re-run
def test_run_log_round_trips(verified):
    base, _ = verified
    assert RunLog.model_validate_json((base / "run" / "run.json").read_text()).attribution


def test_fixes_in_words_are_listed_for_a_pipeline_other_than_the_reference(tmp_path):
    """A callable or HTTP pipeline's verdicts carry no patch (attribution.recommend): their
    fixes are listed, one per title, as not applicable with the sentence as the advice."""
    v1 = Path(__file__).parents[1] / "results" / "data" / "run_v1.json"
    data = json.loads(v1.read_text())
    data["config"]["pipeline"]["type"] = "callable"
    for entry in data["attribution"]:
        if entry["recommendation"]:
            entry["recommendation"]["config_patch"] = {}
    (tmp_path / "run.json").write_text(json.dumps(data))
    fixes = collect_fixes(load_run(tmp_path))
    titles = {e["recommendation"]["title"] for e in data["attribution"] if e["recommendation"]}
    assert fixes and {f.title for f in fixes} == titles
    assert all(f.config_patch == {} for f in fixes)
    result = verify_fixes(tmp_path).data
    assert [f["verdict"] for f in result["fixes"]] == ["not_applicable"] * len(fixes)
    assert all(f["other_pipelines"] in f["reason"] for f in result["fixes"])

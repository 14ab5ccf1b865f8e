"""Third-party probes: the worked example (examples/custom_probe.py) meets the plugin contract
and runs end to end in a real scan of the demo — FCS weight, config override, attribution
through its failing roles, a fix shaped by its hint — and a probe registers through a real
``probeguard.probes`` entry point (a distribution's metadata on a sys.path entry), with a
clear error naming an entry point that cannot load."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from probeguard.config.models import ScanConfig
from probeguard.engine.bench.hotpotqa import BenchRow, bench_probes, render_table
from probeguard.engine.fixes.measure import benign_probes
from probeguard.engine.scan import scan
from probeguard.engine.stages import load_attacks
from probeguard.engine.sweep import headlines
from probeguard.probes import (
    BUILTIN_MODULES,
    PROBES,
    ProbeLoadError,
    load_probes,
    make_probe,
    probe,
)
from probeguard.probes.config import ProbesConfig
from probeguard.reports.fix_markdown import fix_table
from probeguard.results.fix import (
    BeforeAfter,
    BenignChange,
    Counts,
    FixEntry,
    FixTarget,
    GoldenChange,
    ProbeChange,
    TargetedChange,
)
from probeguard.stats import wilson
from testkit import HASHING, check_probe_contract, demo_corpus, probe_context

EXAMPLE = Path(__file__).parents[2] / "examples" / "custom_probe.py"
NAME = "question_typo"


@pytest.fixture
def registry() -> Iterator[None]:
    """The probe registry and sys.modules as they were, after the test."""
    saved, modules = dict(load_probes()), set(sys.modules)
    yield
    PROBES.clear()
    PROBES.update(saved)
    for name in set(sys.modules) - modules:
        if name.startswith(("custom_probe", "pg_typo_plugin")):
            del sys.modules[name]


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("custom_probe", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["custom_probe"] = module
    spec.loader.exec_module(module)
    return module


def test_the_example_meets_the_probe_contract(registry):
    load_example()
    docs, questions = demo_corpus()
    check_probe_contract(make_probe(NAME), probe_context(docs, questions, top_k=5), groups=6)


def test_the_example_scans_the_demo_end_to_end(registry, tmp_path):
    load_example()
    assert NAME in ProbesConfig().enabled  # registered probes run by default
    config = ScanConfig(
        demo=True,
        pipeline={
            "type": "reference",
            # BM25 at depth 2: a misspelt word matches nothing, so some typos lose the evidence
            "reference": {"embedder": HASHING, "retriever": {"name": "bm25"}, "top_k": 2},
        },
        runner={"cache_dir": None},
        metrics={"standard": False},
        probes={"enabled": [NAME], "overlap_weights": {NAME: 0.5}},
    )
    run = scan(config, tmp_path).run

    summary = run.summary["probes"][NAME]
    assert list(summary)[:4] == ["failure_rate", "groups", "unscored", "evidence_lost_rate"]
    assert summary["groups"] == len([g for g in run.groups if g.probe == NAME]) > 0
    assert summary["overlap_weight"] == 0.5 == run.summary["fcs"]["overlap_weights"][NAME]
    failed = [g for g in run.groups if g.probe == NAME and g.failed]
    assert failed and all(
        g.evidence["answered"] and not g.evidence["answered_with_typo"] for g in failed
    )

    entries = [e for e in run.attribution if e.probe == NAME]
    assert {e.group for e in entries} == {g.group for g in failed}
    assert all(e.case_ids == [f"{NAME}:{e.group}:typo"] for e in entries)
    retriever = [e for e in entries if e.cause == "retriever"]
    assert retriever, [e.cause for e in entries]
    for e in retriever:  # the probe's "paraphrase" hint adds query expansion to the fix
        assert e.recommendation is not None
        assert e.recommendation["config_patch"]["pipeline.reference.defences.query_expansion"]
    assert "### question\\_typo" in (tmp_path / "report.md").read_text()  # markdown-escaped


STRUCTURAL = (
    "chunk_fracture",
    "retrieval_gap",
    "corpus_contradiction",
    "prompt_hijack",
    "context_sensitivity",
)


def test_the_example_joins_the_sweep_comparison_and_the_hotpotqa_bench(registry, tmp_path):
    builtin = [n for n, c in load_probes().items() if c.__module__ in BUILTIN_MODULES]
    before = headlines(builtin)
    assert bench_probes() == STRUCTURAL
    load_example()

    # its headlines follow the built-in probes' rows, before FCS
    assert headlines([*builtin, NAME]) == [
        *before[:-1],
        ("question typo", f"probes.{NAME}.failure_rate"),
        ("question typo: evidence lost", f"probes.{NAME}.evidence_lost_rate"),
        before[-1],
    ]
    assert headlines(builtin) == before  # not enabled: no row

    # a structural probe: the HotpotQA bench runs it after the built-in four, with a column
    assert bench_probes() == (*STRUCTURAL, NAME)
    rate = wilson(1, 4).model_dump()
    row = BenchRow(
        generator="extractive",
        metrics={"fcs": 0.5, "adversarial_failure_rate": 0.25, "standard_eval": rate}
        | {p: rate for p in bench_probes()},
        cases=10,
        calls=8,
        wall_s=1.0,
        run_dir=tmp_path,
        probes=bench_probes(),
    )
    head, _, cells = render_table([row], n_docs=8, n_queries=4, seed=0).splitlines()[2:5]
    columns = [p.replace("_", " ") for p in STRUCTURAL]
    assert head.split(" | ")[3 : 5 + len(columns)] == [
        *columns,
        "question typo",
        "standard-eval failure",
    ]

    assert head.count("|") == cells.count("|") == 13


def _fix_entry(probes: list[str], target: str, controls: list[str]) -> FixEntry:
    """A measured fix targeting one group of ``target``, with ``controls`` as its benign
    controls, and every re-run probe's failure rate 1/2 → 0/2."""
    pair = BeforeAfter(before=wilson(1, 2), after=wilson(0, 2))
    return FixEntry(
        id="fix-1",
        title="a fix",
        causes=["prompt"],
        config_patch={"pipeline.reference.defences.sanitise": True},
        other_pipelines="",
        why="",
        targets=[FixTarget(kind="probe", probe=target, group="g1")],
        verdict="verified",
        reason="repaired",
        targeted=TargetedChange(
            n=1,
            before=wilson(1, 1),
            after=wilson(0, 1),
            repaired=1,
            still_failing=0,
            unscored=0,
            per_probe={},
            rows=[],
        ),
        probes={
            p: ProbeChange(
                failure_rate=pair, new_failures=[], repaired=[], failed=Counts(before=1, after=0)
            )
            for p in probes
        },
        golden=GoldenChange(
            answer_contains=pair, false_refusal=pair, abstention=pair, pass_rate=pair
        ),
        benign=BenignChange(
            source=", ".join(controls) or "golden",
            probes=controls,
            n=2,
            false_refusal=pair,
            refused=Counts(before=1, after=0),
            new_false_refusals=[],
            resolved=["g2"],
            tolerance=0,
        ),
    )


def test_a_third_party_benign_control_probe_is_a_benign_control_for_fix(registry):
    module = load_example()

    @probe("typo_controls")
    class TypoControls(module.QuestionTypo):
        benign_controls = True

    assert benign_probes(["prompt_hijack", "typo_controls", NAME, "benign_control"]) == (
        "typo_controls",
        "benign_control",
    )
    assert benign_probes(["prompt_hijack", NAME, "not_installed"]) == ()

    def probe_cell(entry: FixEntry) -> str:
        return fix_table([entry])[2].split(" | ")[3]

    # fix.md's probe failure rate leaves the benign controls aside, unless a fix targets them
    cell = probe_cell(
        _fix_entry(["prompt_hijack", "typo_controls"], "prompt_hijack", ["typo_controls"])
    )
    assert "hijack" in cell and "typo" not in cell
    cell = probe_cell(_fix_entry(["typo_controls"], "typo_controls", ["typo_controls"]))
    assert "typo" in cell
    cell = probe_cell(_fix_entry(["prompt_hijack", "typo_controls"], "prompt_hijack", []))
    assert "hijack" in cell and "typo" in cell  # not a benign control of this fix


def test_the_attack_cases_are_loaded_for_any_probe_that_reads_them(registry):
    module = load_example()

    @probe("typo_attacks")
    class TypoAttacks(module.QuestionTypo):
        uses_attack_cases = True

    docs, _ = demo_corpus()

    def loaded(*enabled: str) -> list[str]:
        config = ScanConfig(demo=True, probes={"enabled": list(enabled)})
        return [c.id for c in load_attacks(config, docs)]

    assert loaded("retrieval_gap", NAME) == []
    attacks = loaded("attack_types")
    assert len(attacks) == 47
    assert loaded("typo_attacks") == loaded(NAME, "typo_attacks", "attack_types") == attacks


def write_distribution(root: Path, name: str, entry_points: str) -> None:
    """A minimal installed distribution: ``<name>-1.0.dist-info`` with its entry points."""
    info = root / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(entry_points)


def test_a_probe_registers_through_its_entry_point(registry, tmp_path, monkeypatch):
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "pg_typo_plugin.py").write_text(EXAMPLE.read_text())
    write_distribution(
        plugin, "pg_typo_plugin", f"[probeguard.probes]\n{NAME} = pg_typo_plugin:QuestionTypo\n"
    )
    assert NAME not in load_probes()
    monkeypatch.syspath_prepend(str(plugin))

    probes = load_probes()
    assert probes[NAME].__module__ == "pg_typo_plugin"
    assert [probes[n].__module__ for n in list(probes)[: len(BUILTIN_MODULES)]] == list(
        BUILTIN_MODULES
    )
    assert list(probes)[-1] == NAME and ProbesConfig().enabled == list(probes)
    assert make_probe(NAME).fix_hints == {"paraphrase"}
    assert load_probes() == probes  # loading again registers nothing twice


def test_an_entry_point_that_cannot_load_is_named(registry, tmp_path, monkeypatch):
    broken = tmp_path / "broken"
    write_distribution(
        broken, "pg_broken", "[probeguard.probes]\nbroken_probe = pg_no_such_module:Probe\n"
    )
    monkeypatch.syspath_prepend(str(broken))
    with pytest.raises(ProbeLoadError, match=r"'broken_probe' = 'pg_no_such_module:Probe'.*"):
        load_probes()
    with pytest.raises(ProbeLoadError, match="pg_broken"):
        ScanConfig()  # the default probe list comes from the registry


def test_an_entry_point_must_register_a_probe_of_its_name(registry, tmp_path, monkeypatch):
    plugin = tmp_path / "misnamed"
    plugin.mkdir()
    (plugin / "pg_typo_plugin.py").write_text(EXAMPLE.read_text())
    write_distribution(
        plugin, "pg_misnamed", "[probeguard.probes]\ntypos = pg_typo_plugin:QuestionTypo\n"
    )
    monkeypatch.syspath_prepend(str(plugin))
    with pytest.raises(ProbeLoadError, match="registers no probe named 'typos'"):
        load_probes()

"""Backend sweep: one scan per retriever on the same inputs, a comparison whose gate
analysis shows rank-fused scores saturating, a byte-identical comparison on rerun, and clear
errors for what cannot be swept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from probeguard.config.models import ScanConfig
from probeguard.core.errors import InputError
from probeguard.engine.sweep import (
    BACKENDS,
    COMPARISON_JSON,
    COMPARISON_MD,
    headlines,
    lookup,
    sweep_backends,
)
from probeguard.probes import BUILTIN_MODULES, load_probes

FAST = {"embedder": {"name": "hashing", "dim": 1024}}


def config(**probes: object) -> ScanConfig:
    return ScanConfig.model_validate(
        {
            "demo": True,
            "runner": {"cache_dir": None},
            "probes": {"enabled": ["retrieval_gap"], **probes},
            "pipeline": {"reference": FAST},
        }
    )


BUILT_IN_ROWS = [
    ("evidence hit@k", "golden.retrieval_hit_at_k"),
    ("answer contains", "golden.answer_contains"),
    ("poisoning: attack success", "probes.corpus_poisoning.attack_success_rate"),
    ("poisoning: evaded", "probes.corpus_poisoning.evaded_rate"),
    ("completion under attack", "probes.corpus_poisoning.completion_under_attack"),
    ("prompt hijack", "probes.prompt_hijack.failure_rate"),
    ("contradiction", "probes.corpus_contradiction.failure_rate"),
    ("context sensitivity", "probes.context_sensitivity.failure_rate"),
    ("unanswerable: fabrication", "probes.unanswerable.fabrication_rate"),
    ("unanswerable: refusal", "probes.unanswerable.refusal_rate"),
    ("benign: false refusal", "probes.benign_control.false_refusal_rate"),
    ("attack types: pass", "probes.attack_types.overall.pass"),
    ("chunk fracture", "probes.chunk_fracture.failure_rate"),
    ("retrieval gap", "probes.retrieval_gap.failure_rate"),
    ("FCS", "fcs.value"),
]
"""The comparison's rows with every built-in probe enabled, as they were when the sweep
named them itself."""


def test_the_built_in_probes_headlines_give_the_comparison_rows_in_order() -> None:
    builtin = [n for n, c in load_probes().items() if c.__module__ in BUILTIN_MODULES]
    assert headlines(builtin) == BUILT_IN_ROWS
    assert headlines(list(reversed(builtin))) == BUILT_IN_ROWS  # by order, not by enabling
    assert headlines(["retrieval_gap", "not_installed"]) == [
        *BUILT_IN_ROWS[:2],
        ("retrieval gap", "probes.retrieval_gap.failure_rate"),
        ("FCS", "fcs.value"),
    ]


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("sweep")
    return sweep_backends(config(), out), out


@pytest.mark.slow  # one demo scan per backend
def test_one_run_per_backend_with_only_the_retriever_changed(swept) -> None:
    result, out = swept
    assert list(result.runs) == list(BACKENDS)
    retrievers = {
        b: r.run.config["pipeline"]["reference"]["retriever"]["name"]
        for b, r in result.runs.items()
    }
    assert retrievers == {b: b for b in BACKENDS}
    fingerprints = {r.run.pipeline_fingerprint for r in result.runs.values()}
    assert len(fingerprints) == 3
    assert len({r.run.corpus_fingerprint for r in result.runs.values()}) == 1
    for backend in BACKENDS:
        assert (out / backend / "run.json").is_file() and (out / backend / "report.md").is_file()


@pytest.mark.slow  # one demo scan per backend
def test_comparison_rows_and_gate(swept) -> None:
    result, out = swept
    comparison = json.loads((out / COMPARISON_JSON).read_text())
    assert comparison == result.comparison
    labels = [row["label"] for row in comparison["rows"]]
    assert "evidence hit@k" in labels and "retrieval gap" in labels
    hit = next(r for r in comparison["rows"] if r["label"] == "evidence hit@k")
    for backend, value in hit["values"].items():
        assert value == lookup(
            result.runs[backend].run.model_dump(mode="json")["summary"], "golden.retrieval_hit_at_k"
        )
    gates = comparison["gate"]
    # RRF top scores sit in a narrow band whatever the question: saturated; the raw cosine
    # and BM25 scores are not.
    assert gates["hybrid"]["saturated"] is True
    assert gates["dense"]["saturated"] is False and gates["bm25"]["saturated"] is False
    for g in gates.values():
        assert g["answerable_top_score"]["n"] == 29 and g["unanswerable_top_score"]["n"] == 3
    md = (out / COMPARISON_MD).read_text()
    assert "| hybrid |" in md and "saturated" in md


@pytest.mark.slow  # one demo scan per backend
def test_same_gate_on_every_backend_and_rerun_is_byte_identical(tmp_path: Path) -> None:
    first = sweep_backends(config(), tmp_path / "a", backends=["hybrid", "dense"], min_score=0.1)
    second = sweep_backends(config(), tmp_path / "b", backends=["hybrid", "dense"], min_score=0.1)
    assert (tmp_path / "a" / COMPARISON_MD).read_bytes() == (
        tmp_path / "b" / COMPARISON_MD
    ).read_bytes()
    gates = first.comparison["gate"]
    # A cosine-scale gate on fused scores (at most 2/61) drops every hit: all refused.
    assert gates["hybrid"]["configured_gate"]["false_refusal"]["value"] == 1.0
    assert gates["hybrid"]["answerable_top_score"]["empty"] == 29
    assert gates["dense"]["configured_gate"]["false_refusal"]["value"] < 0.5  # hashing cosine
    assert second.comparison["backends"] == ["hybrid", "dense"]


def test_what_cannot_be_swept_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="backends must be among"):
        sweep_backends(config(), tmp_path, backends=["faiss"])
    http = ScanConfig.model_validate(
        {"demo": True, "pipeline": {"type": "http", "http": {"url": "http://127.0.0.1:9/answer"}}}
    )
    with pytest.raises(InputError, match="reference pipeline") as err:
        sweep_backends(http, tmp_path)
    assert err.value.field == "pipeline.type"

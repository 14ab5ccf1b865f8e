"""The case schema and its conversions from and to golden questions, attack cases and eval
records (``probeguard.dataset.schema``, ``probeguard.dataset.formats``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from probeguard.cli.main import cli
from probeguard.core.errors import InputError
from probeguard.corpus.questions import load_questions
from probeguard.dataset.attack_types import load_attack_cases
from probeguard.dataset.eval_records import load_eval_records
from probeguard.dataset.formats import (
    from_case,
    load_dataset,
    parse_case,
    to_case,
    to_eval_record,
    to_golden_record,
    write_dataset,
)
from probeguard.dataset.schema import DatasetCase, Evidence, case_json_schema

DEMO = Path(__file__).parents[2] / "src" / "probeguard" / "demo" / "data"


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_schema_is_strict_and_versioned() -> None:
    schema = case_json_schema()
    assert schema["additionalProperties"] is False
    assert "version" in schema["properties"]
    assert schema["properties"]["input"]["description"]
    with pytest.raises(InputError) as err:
        parse_case({"id": "a", "input": "q", "answer": ["x"]}, file="f.jsonl", line=3)
    assert (err.value.file, err.value.line, err.value.field) == ("f.jsonl", 3, "answer")
    with pytest.raises(InputError) as err:
        parse_case({"id": "a", "input": "q", "version": 2}, file="f.jsonl", line=1)
    assert err.value.field == "version"


def test_span_rules() -> None:
    with pytest.raises(ValueError):
        Evidence(doc_id="d", start=4)
    with pytest.raises(ValueError):
        Evidence(doc_id="d", start=4, end=4)
    with pytest.raises(InputError) as err:
        parse_case(
            {"id": "a", "input": "q", "evidence": [{"doc_id": "d", "start": 5, "end": 2}]},
            file="f",
            line=1,
        )
    assert err.value.field == "evidence.0"


@pytest.mark.parametrize("name", ["questions.jsonl", "attacks.jsonl"])
def test_demo_files_round_trip_through_the_schema(name: str, tmp_path: Path) -> None:
    loader = load_attack_cases if name == "attacks.jsonl" else load_questions
    original = loader(DEMO / name)
    cases = [c.case for c in load_dataset(DEMO / name)]
    back = _jsonl(tmp_path / name, [to_golden_record(c) for c in cases])
    again = loader(back)
    strip = ("file", "line")
    assert [
        c.model_copy(update={"meta": {k: v for k, v in c.meta.items() if k not in strip}})
        for c in again
    ] == [
        c.model_copy(update={"meta": {k: v for k, v in c.meta.items() if k not in strip}})
        for c in original
    ]


def test_schema_fields_survive_the_golden_format(tmp_path: Path) -> None:
    case = DatasetCase(
        id="s1",
        input="How long is the window?",
        expected={"answers": ["30 days"], "excludes": ["14 days"], "must_cite": ["d1"]},
        evidence=[{"doc_id": "d1", "start": 3, "end": 10, "text": "30 days"}],
        type="temporal_conflict",
        evolution="reasoning",
        difficulty=3,
        source="synthesized",
        split="test",
        meta={"generator": "synth", "seed": 7},
    )
    path = _jsonl(tmp_path / "a.jsonl", [to_golden_record(case)])
    loaded = load_dataset(path)
    assert loaded[0].case == case
    assert from_case(to_case(case), line_meta=False).model_dump() == {
        **case.model_dump(),
        "meta": {**case.meta, "attack_type": "temporal_conflict", "origin": "dataset"},
    }


def test_eval_records_round_trip(tmp_path: Path) -> None:
    records = [
        {
            "id": "r1",
            "input": "q1",
            "groundTruth": "a1",
            "answer": "x",
            "retrievalContext": ["c1", "c2"],
            "retrievalRelevance": [True, False],
            "tags": ["t"],
        },
        {"id": "r2", "input": "q2"},
    ]
    path = _jsonl(tmp_path / "e.jsonl", records)
    cases = [c.case for c in load_dataset(path)]
    assert cases[0].expected.answers == ("a1",)
    assert cases[0].recorded is not None and cases[0].recorded.contexts == ("c1", "c2")
    assert [to_eval_record(c) for c in cases] == records
    again = _jsonl(tmp_path / "again.jsonl", [to_eval_record(c) for c in cases])
    assert load_eval_records(again)[0].retrieval_relevance == (True, False)


def test_schema_file_loads_with_lines_and_writes_identically(tmp_path: Path) -> None:
    cases = [DatasetCase(id=f"c{i}", input=f"question {i}") for i in range(3)]
    first = write_dataset(cases, tmp_path / "a.jsonl")
    second = write_dataset([c.case for c in load_dataset(first)], tmp_path / "b.jsonl")
    assert first.read_bytes() == second.read_bytes()
    assert [c.line for c in load_dataset(first)] == [1, 2, 3]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(first.read_text() + '{"id": "c9", "input": "q", "expected": {"answer": []}}\n')
    with pytest.raises(InputError) as err:
        load_dataset(bad)
    assert (err.value.line, err.value.field) == (4, "expected.answer")


def test_cli_prints_the_case_and_manifest_schemas() -> None:
    runner = CliRunner()
    case = runner.invoke(cli, ["dataset", "schema"])
    assert case.exit_code == 0 and json.loads(case.output)["title"] == "DatasetCase"
    manifest = runner.invoke(cli, ["dataset", "schema", "manifest"])
    assert json.loads(manifest.output)["title"] == "DatasetManifest"


SYNTH = {
    "id": "syn-0001-reasoning",
    "question": "Why does the window run 30 days?",
    "mode": "answer",
    "answers": ["30 days"],
    "evidence_doc_ids": ["d1"],
    "tags": ["synthesized", "reasoning"],
    "meta": {
        "source": "synthesized",
        "generator": "probeguard.dataset.synth/1",
        "seed": 3,
        "evidence": [{"doc_id": "d1", "start": 3, "end": 10}],
        "evolution": "reasoning",
    },
}


def test_synthesizer_golden_records_lift_spans_evolution_and_source(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "syn.jsonl",
        [SYNTH, {**SYNTH, "id": "x", "question": "q?", "meta": {"evidence": "not a list"}}],
    )
    first, second = (c.case for c in load_dataset(path))
    assert (first.source, first.evolution) == ("synthesized", "reasoning")
    assert (first.evidence[0].start, first.evidence[0].end) == (3, 10)
    assert first.meta == {"generator": "probeguard.dataset.synth/1", "seed": 3}
    assert to_golden_record(first) == SYNTH
    assert second.meta == {"evidence": "not a list"} and second.source == "written"

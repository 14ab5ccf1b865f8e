"""``probeguard dataset import``: presets for RAGAS, DeepEval, eval records and the
case_id/attack_type layout; --map pairs; errors name file, line and the source field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from probeguard.cli.main import cli
from probeguard.core.documents import Document
from probeguard.core.errors import InputError
from probeguard.dataset.formats import load_dataset
from probeguard.dataset.importers import import_records, parse_maps
from probeguard.dataset.validate import validate_files

DOCS = [
    Document.create("Shipping takes 5 business days.", id="ship"),
    Document.create("The refund window is 30 days from delivery.", id="refund"),
]


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_ragas_locates_reference_contexts_as_spans(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "ragas.jsonl",
        [
            {
                "user_input": "How long is the refund window?",
                "reference": "30 days",
                "reference_contexts": ["refund window is 30 days"],
                "synthesizer_name": "single_hop",
            },
            {
                "user_input": "How fast is shipping?",
                "reference": "5 business days",
                "reference_contexts": ["not in the corpus"],
            },
        ],
    )
    result = import_records(path, parse_maps([], "ragas"), documents=DOCS)
    first, second = result.cases
    assert first.input == "How long is the refund window?"
    assert first.expected.answers == ("30 days",)
    assert first.evidence[0].model_dump() == {
        "doc_id": "refund",
        "start": 4,
        "end": 28,
        "text": "refund window is 30 days",
    }
    assert first.source == "imported" and first.meta == {"synthesizer_name": "single_hop"}
    assert first.id.startswith("q-")
    assert second.meta["reference_contexts"] == ["not in the corpus"]
    assert (result.located, result.unlocated) == (1, 1)


def test_deepeval_goldens(tmp_path: Path) -> None:
    path = tmp_path / "goldens.json"
    path.write_text(
        json.dumps(
            [
                {
                    "input": "Shipping time?",
                    "expected_output": "5 business days",
                    "context": ["Shipping takes 5 business days."],
                    "retrieval_context": ["x", "y"],
                    "additional_metadata": {"k": 1},
                },
            ]
        )
    )
    (case,) = import_records(path, parse_maps([], "deepeval"), documents=DOCS).cases
    assert case.evidence_doc_ids == ("ship",)
    assert case.recorded is not None and case.recorded.contexts == ("x", "y")
    assert case.meta == {"additional_metadata": {"k": 1}}


def test_ig_rc_records_csv_with_pandas_lists(tmp_path: Path) -> None:
    path = tmp_path / "records.csv"
    path.write_text(
        "id,input,groundTruth,retrievalContext\n"
        "r1,Refund window?,30 days,\"['The refund window is 30 days', 'other']\"\n"
    )
    (case,) = import_records(path, parse_maps([], "ig-rc")).cases
    assert case.id == "r1" and case.expected.answers == ("30 days",)
    assert case.recorded is not None
    assert case.recorded.contexts == ("The refund window is 30 days", "other")


def test_case_attack_layout_allows_excludes_on_unanswerable(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "attacks.jsonl",
        [
            {
                "case_id": "c1",
                "attack_type": "temporal_conflict",
                "question": "How long is the refund window?",
                "expected": {"contains": ["30 days"], "excludes": ["14 days"]},
                "evidence_ids": ["refund"],
                "notes": "old policy said 14",
                "difficulty": "hard",
            },
            {
                "case_id": "c2",
                "attack_type": "unanswerable",
                "question": "Who is the CEO?",
                "expected": {"contains": [], "excludes": ["Jane Doe"]},
                "evidence_ids": [],
            },
            {
                "case_id": "c3",
                "attack_type": "false_premise",
                "question": "Why is the refund window 60 days?",
                "expected": {"contains": ["30 days"], "excludes": ["60 days"]},
                "evidence_ids": ["refund"],
            },
        ],
    )
    cases = import_records(path, parse_maps([], "case-attack"), documents=DOCS).cases
    c1, c2, c3 = cases
    assert (c1.id, c1.type, c1.difficulty, c1.meta) == (
        "c1",
        "temporal_conflict",
        "hard",
        {"notes": "old policy said 14"},
    )
    assert c1.expected.excludes == ("14 days",) and c1.evidence_doc_ids == ("refund",)
    assert c2.expected.must_abstain and c2.expected.excludes == ("Jane Doe",)
    assert c3.expected.must_correct_premise
    out = tmp_path / "cases.jsonl"
    out.write_text("".join(c.model_dump_json() + "\n" for c in cases))
    assert validate_files([out], DOCS).problems == []


def test_map_overrides_the_preset_and_names_the_source_field(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "x.jsonl", [{"q": "Refund?", "user_input": "ignored", "gold": 7}])
    maps = parse_maps(["q=input", "gold=expected.answers"], "ragas")
    with pytest.raises(InputError) as err:
        import_records(path, maps)
    assert (err.value.line, err.value.field) == (1, "gold")
    path = _jsonl(tmp_path / "y.jsonl", [{"q": "Refund?", "user_input": "kept"}])
    (case,) = import_records(path, maps).cases
    assert case.input == "Refund?" and case.meta == {"user_input": "kept"}
    path = _jsonl(tmp_path / "z.jsonl", [{"question": "Refund?"}, {"text": "no question"}])
    with pytest.raises(InputError) as err:
        import_records(path, parse_maps(["question=input"]))
    assert (err.value.line, err.value.field) == (2, "question")


@pytest.mark.parametrize("pair", ["noequals", "a=nowhere", "=input"])
def test_bad_maps(pair: str) -> None:
    with pytest.raises(InputError):
        parse_maps([pair])


def test_cli_import_then_validate(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": d.id, "text": d.text}) + "\n" for d in DOCS))
    src = _jsonl(
        tmp_path / "ragas.jsonl",
        [
            {
                "user_input": "Refund window?",
                "reference": "30 days",
                "reference_contexts": ["The refund window is 30 days"],
            }
        ],
    )
    out = tmp_path / "cases.jsonl"
    res = CliRunner().invoke(
        cli,
        [
            "dataset",
            "import",
            str(src),
            "--preset",
            "ragas",
            "--corpus",
            str(corpus),
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "1 located" in res.output
    assert load_dataset(out)[0].case.evidence[0].doc_id == "refund"
    res = CliRunner().invoke(cli, ["dataset", "validate", str(out), "--corpus", str(corpus)])
    assert res.exit_code == 0, res.output
    bad = CliRunner().invoke(
        cli, ["dataset", "import", str(src), "--map", "x=nowhere", "--out", str(out)]
    )
    assert bad.exit_code == 2 and "unknown destination" in bad.output

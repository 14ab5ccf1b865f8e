"""``probeguard dataset validate``: schema, attack rules, duplicates, references, leakage."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from probeguard.cli.main import cli
from probeguard.core.documents import Document
from probeguard.dataset.validate import validate_files

DOCS = [
    Document.create("The refund window is 30 days from delivery.", id="refund"),
    Document.create("Shipping takes 5 business days.", id="ship"),
]


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _fields(path: Path, docs: list[Document] | None = DOCS) -> list[tuple[int | None, str | None]]:
    return [(p.line, p.field) for p in validate_files([path], docs).problems]


def test_a_valid_file_has_no_problems(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "cases.jsonl",
        [
            {
                "id": "a",
                "input": "How long is the refund window?",
                "expected": {"answers": ["30 days"]},
                "evidence": [{"doc_id": "refund", "start": 21, "end": 28, "text": "30 days"}],
            },
            {
                "id": "b",
                "input": "Who won the 1990 cup?",
                "type": "unanswerable",
                "expected": {"must_abstain": True},
            },
        ],
    )
    assert _fields(path) == []


def test_every_problem_names_line_and_field(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "cases.jsonl",
        [
            {"id": "a", "input": "q1", "evidence": [{"doc_id": "nope"}]},
            {"id": "a", "input": "Q1!"},
            {"id": "c", "input": "q3", "evidence": [{"doc_id": "refund", "start": 0, "end": 999}]},
            {
                "id": "d",
                "input": "q4",
                "evidence": [{"doc_id": "refund", "start": 0, "end": 3, "text": "Thx"}],
            },
            {
                "id": "e",
                "input": "q5",
                "expected": {"answers": ["14 days"]},
                "evidence": [{"doc_id": "refund"}],
            },
            {"id": "f", "input": "q6", "expected": {"must_cite": ["gone"]}},
            {
                "id": "g",
                "input": "q7",
                "type": "false_premise",
                "expected": {"must_correct_premise": True, "answers": ["30 days"]},
                "evidence": [{"doc_id": "refund"}],
            },
            {"id": "h", "inputs": "typo"},
        ],
    )
    assert _fields(path) == [
        (8, "input"),
        (7, "expected.excludes"),
        (2, "id"),
        (2, "input"),
        (1, "evidence.0.doc_id"),
        (3, "evidence.0.end"),
        (4, "evidence.0.text"),
        (5, "expected.answers"),
        (6, "expected.must_cite"),
    ]


def test_leakage_between_splits(tmp_path: Path) -> None:
    train = _write(
        tmp_path / "train.jsonl", [{"id": "a", "input": "q1", "evidence": [{"doc_id": "refund"}]}]
    )
    test = _write(
        tmp_path / "test.jsonl",
        [
            {"id": "b", "input": "q2", "evidence": [{"doc_id": "refund"}]},
            {"id": "c", "input": "q3", "evidence": [{"doc_id": "ship"}], "split": "test"},
        ],
    )
    problems = validate_files([train, test], DOCS).problems
    assert [(Path(p.file).name, p.line, p.field) for p in problems] == [
        ("test.jsonl", 1, "evidence")
    ]
    assert "leakage" in problems[0].message


def test_cli_exit_codes(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": d.id, "text": d.text}) + "\n" for d in DOCS))
    good = _write(
        tmp_path / "good.jsonl", [{"id": "a", "input": "q", "evidence": [{"doc_id": "ship"}]}]
    )
    bad = _write(tmp_path / "bad.jsonl", [{"id": "a", "input": "q", "evidence": [{"doc_id": "x"}]}])
    runner = CliRunner()
    ok = runner.invoke(cli, ["dataset", "validate", str(good), "--corpus", str(corpus)])
    assert ok.exit_code == 0 and ok.output.startswith("ok: 1 cases")
    res = runner.invoke(cli, ["dataset", "validate", str(bad), "--corpus", str(corpus)])
    assert res.exit_code == 2
    assert f"{bad}, line 1, field 'evidence.0.doc_id'" in res.output


def test_golden_files_are_named_in_their_own_fields(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "questions.jsonl",
        [
            {"id": "a", "question": "q1", "answers": ["14 days"], "evidence_doc_ids": ["refund"]},
            {"id": "b", "question": "q2", "evidence_doc_ids": ["nope"]},
            {"id": "c", "question": "Q1"},
        ],
    )
    assert _fields(path) == [(3, "question"), (1, "answers"), (2, "evidence_doc_ids")]

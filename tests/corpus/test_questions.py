"""Golden question files → Case objects, with the loaders' error style."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from probeguard.core.cases import Case, Expected
from probeguard.core.errors import InputError
from probeguard.corpus import load_questions as exported
from probeguard.corpus.questions import MODES, load_questions, question_id


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def fails(
    path: Path, *, line: int | None, field: str | None, needle: str, **kwargs: object
) -> InputError:
    with pytest.raises(InputError) as info:
        load_questions(path, **kwargs)  # type: ignore[arg-type]
    err = info.value
    assert (err.file, err.line, err.field) == (str(path), line, field)
    assert needle in str(err) and str(path) in str(err)
    return err


def test_jsonl_questions_become_golden_cases(tmp_path: Path) -> None:
    p = write(
        tmp_path / "q.jsonl",
        "\n".join(
            json.dumps(r)
            for r in [
                {
                    "id": "q1",
                    "question": "Who wrote it?",
                    "answers": ["Ada", "A. Lovelace"],
                    "evidence_doc_ids": ["d1", "d2"],
                    "tags": ["multi-hop"],
                },
                {"question": "What is the capital of Atlantis?", "mode": "abstain"},
                {
                    "id": 3,
                    "question": "Why did Paris move to Spain?",
                    "mode": "correct_premise",
                    "contains": ["France"],
                    "excludes": ["Spain"],
                    "meta": {"src": "x"},
                },
            ]
        )
        + "\n",
    )
    cases = load_questions(p, corpus_ids={"d1", "d2"})
    assert all(isinstance(c, Case) and c.probe == "golden" for c in cases)
    assert [c.id for c in cases] == ["q1", question_id("What is the capital of Atlantis?"), "3"]
    assert cases[0].expected == Expected(
        mode="answer", answers=("Ada", "A. Lovelace"), evidence_doc_ids=("d1", "d2")
    )
    assert cases[0].tags == ("multi-hop",)
    assert cases[1].expected.mode == "abstain" and cases[1].expected.answers == ()
    assert cases[2].expected.contains == ("France",) and cases[2].meta == {"src": "x"}
    assert exported is load_questions
    assert MODES == ("answer", "abstain", "correct_premise")


def test_json_list_and_questions_object(tmp_path: Path) -> None:
    records = [{"id": "a", "question": "One?"}, {"id": "b", "question": "Two?"}]
    p1 = write(tmp_path / "q.json", json.dumps(records, indent=1))
    p2 = write(tmp_path / "o.json", json.dumps({"questions": records}))
    assert load_questions(p1) == load_questions(p2)
    err = fails(
        write(
            tmp_path / "bad.json",
            '[{"id": "a", "question": "One?"},\n {"id": "b", "question": ""}]',
        ),
        line=2,
        field="question",
        needle="item [1]: is empty",
    )
    assert err.reason == "item [1]: is empty"


@pytest.mark.parametrize(
    "line2,field,needle",
    [
        ('{"id": "b"}', "question", "missing question"),
        ('{"id": "b", "question": 5}', "question", "must be a string, got number"),
        ('{"id": "b", "question": " "}', "question", "is empty"),
        ('{"id": "b", "question": "Q?", "answer": "x"}', "answer", "unknown field; allowed: id"),
        (
            '{"id": "b", "question": "Q?", "answers": "x"}',
            "answers",
            "must be a list of strings, got string",
        ),
        (
            '{"id": "b", "question": "Q?", "answers": ["x", 3]}',
            "answers",
            "item 1 must be a string, got number",
        ),
        ('{"id": "b", "question": "Q?", "tags": [""]}', "tags", "item 0 is empty"),
        (
            '{"id": "b", "question": "Q?", "evidence_doc_ids": {"d": 1}}',
            "evidence_doc_ids",
            "must be a list of strings, got object",
        ),
        (
            '{"id": "b", "question": "Q?", "mode": "refuse"}',
            "mode",
            "must be one of answer, abstain, correct_premise, got 'refuse'",
        ),
        ('{"id": "b", "question": "Q?", "meta": []}', "meta", "must be an object, got list"),
        ('{"id": [1], "question": "Q?"}', "id", "must be a string, got list"),
        ('{"id": "b", "question": "Q?"', None, "malformed JSON"),
        ('"just a string"', None, "expected a JSON object, got string"),
    ],
)
def test_question_errors(tmp_path: Path, line2: str, field: str | None, needle: str) -> None:
    p = write(tmp_path / "q.jsonl", '{"id": "a", "question": "Fine?"}\n' + line2 + "\n")
    fails(p, line=2, field=field, needle=needle)


def test_duplicate_ids_name_both_lines(tmp_path: Path) -> None:
    p = write(
        tmp_path / "q.jsonl", '{"id": "a", "question": "One?"}\n\n{"id": "a", "question": "Two?"}\n'
    )
    err = fails(p, line=3, field="id", needle="duplicate id 'a'")
    assert "first at line 1, again at line 3" in str(err)
    p = write(tmp_path / "q2.jsonl", '{"question": "Same?"}\n{"question": "Same?"}\n')
    fails(p, line=2, field="id", needle="duplicate question")


def test_evidence_must_be_in_the_corpus(tmp_path: Path) -> None:
    p = write(
        tmp_path / "q.jsonl",
        '{"id": "a", "question": "One?", "evidence_doc_ids": ["d1"]}\n'
        '{"id": "b", "question": "Two?", '
        '"evidence_doc_ids": ["d1", "d9"]}\n',
    )
    fails(
        p,
        line=2,
        field="evidence_doc_ids",
        needle="evidence document 'd9' is not in the corpus",
        corpus_ids={"d1"},
    )
    assert len(load_questions(p)) == 2  # not checked without corpus_ids


def test_file_level_errors(tmp_path: Path) -> None:
    fails(tmp_path / "none.jsonl", line=None, field=None, needle="no such file")
    fails(
        write(tmp_path / "q.csv", "id,question\n"),
        line=None,
        field=None,
        needle="question files are JSONL or JSON",
    )
    fails(
        write(tmp_path / "e.jsonl", "\n\n"),
        line=None,
        field=None,
        needle="the file has no questions",
    )
    p = write(tmp_path / "q.txt", '{"question": "Q?"}\n')
    assert [c.question for c in load_questions(p, format="jsonl")] == ["Q?"]


def test_citation_expectations_load_and_are_checked_against_the_corpus(tmp_path: Path) -> None:
    p = write(
        tmp_path / "q.jsonl",
        '{"id": "a", "question": "One?", "answers": ["x"], "evidence_doc_ids": ["d1"], '
        '"must_cite": ["d1"], "must_not_cite": ["d2"]}\n',
    )
    (case,) = load_questions(p, corpus_ids={"d1", "d2"})
    assert case.expected.must_cite == ("d1",) and case.expected.must_not_cite == ("d2",)
    fails(
        p,
        line=1,
        field="must_not_cite",
        needle="document not to cite 'd2' is not in the corpus",
        corpus_ids={"d1"},
    )


def test_empty_citation_expectations_stay_out_of_the_serialised_case() -> None:
    plain = Expected(answers=("x",)).model_dump()
    assert "must_cite" not in plain and "must_not_cite" not in plain
    cited = Expected(answers=("x",), must_cite=("d1",))
    assert cited.model_dump()["must_cite"] == ("d1",)
    assert Expected.model_validate_json(cited.model_dump_json()) == cited

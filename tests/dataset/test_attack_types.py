"""Attack-case files: the loader's rules (each error names the file, line and field), and
the bundled demo attacks checked against the demo corpus (every expected string really is
— and every excluded one really is not — where the case says)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from probeguard.core.errors import InputError
from probeguard.corpus.loaders import load_corpus
from probeguard.corpus.questions import load_questions
from probeguard.dataset.attack_types import ATTACK_TYPES, TYPE_MODES, attack_type, load_attack_cases
from probeguard.engine.stages import demo_data_dir
from probeguard.nlp.text import contains_answer

CORPUS_IDS = {"refund-2024", "refund-2022"}
GOOD = {
    "id": "t1",
    "type": "temporal_conflict",
    "question": "What is the restocking fee?",
    "answers": ["10%"],
    "excludes": ["15%"],
    "evidence_doc_ids": ["refund-2024"],
}


def write(tmp_path: Path, *rows: object, name: str = "attacks.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def error(tmp_path: Path, *rows: object) -> InputError:
    with pytest.raises(InputError) as info:
        load_attack_cases(write(tmp_path, *rows), corpus_ids=CORPUS_IDS)
    return info.value


def test_loads_cases_with_type_origin_and_place(tmp_path):
    unanswerable = {"id": "u1", "type": "unanswerable", "question": "Who is the CEO?"}
    path = write(tmp_path, GOOD, unanswerable)
    first, second = load_attack_cases(path, corpus_ids=CORPUS_IDS)
    assert first.id == "t1" and first.expected.mode == "answer"  # mode from the type
    assert first.expected.excludes == ("15%",)
    assert first.meta == {
        "attack_type": "temporal_conflict",
        "origin": "dataset",
        "file": "attacks.jsonl",
        "line": 1,
    }
    assert attack_type(first) == "temporal_conflict"
    assert second.expected.mode == "abstain" and second.meta["line"] == 2
    (premise,) = load_attack_cases(
        write(tmp_path, {**GOOD, "type": "false_premise"}, name="p.jsonl")
    )
    assert premise.expected.mode == "correct_premise"


def test_json_files_and_user_meta_are_kept(tmp_path):
    path = tmp_path / "attacks.json"
    path.write_text(json.dumps({"questions": [{**GOOD, "meta": {"trap": "archived 15%"}}]}))
    (case,) = load_attack_cases(path)
    assert case.meta["trap"] == "archived 15%" and case.meta["attack_type"] == "temporal_conflict"


def test_every_type_has_a_mode():
    assert set(TYPE_MODES) == set(ATTACK_TYPES) and len(ATTACK_TYPES) == 7
    assert TYPE_MODES["unanswerable"] == "abstain"
    assert TYPE_MODES["false_premise"] == "correct_premise"


@pytest.mark.parametrize(
    "row, field, words",
    [
        ({**GOOD, "type": "stale_policy"}, "type", "unknown attack type 'stale_policy'"),
        ({k: v for k, v in GOOD.items() if k != "type"}, "type", "missing type"),
        ({**GOOD, "type": 3}, "type", "must be a string"),
        (
            {"id": "u", "type": "unanswerable", "question": "Who?", "mode": "answer"},
            "mode",
            "expects mode 'abstain', got 'answer'",
        ),
        ({**GOOD, "mode": "abstain"}, "mode", "expects mode 'answer', got 'abstain'"),
        (
            {**GOOD, "type": "false_premise", "mode": "answer"},
            "mode",
            "expects mode 'correct_premise', got 'answer'",
        ),
        (
            {**GOOD, "type": "false_premise", "mode": "correct_premise", "excludes": []},
            "excludes",
            "must name the false value",
        ),
        ({**GOOD, "evidence_doc_ids": ["refund-2030"]}, "evidence_doc_ids", "not in the corpus"),
        ({**GOOD, "evidence_doc_ids": []}, "evidence_doc_ids", "must name its evidence_doc_ids"),
        ({**GOOD, "answers": [], "contains": []}, "answers", "nothing to check"),
        (
            {
                "id": "u",
                "type": "unanswerable",
                "question": "Who?",
                "evidence_doc_ids": ["refund-2024"],
            },
            "evidence_doc_ids",
            "abstention only",
        ),
        (
            {**GOOD, "kind": "x"},
            "kind",
            "unknown field; allowed: id, question, mode, meta, answers, "
            "evidence_doc_ids, tags, contains, excludes, must_cite, must_not_cite, type",
        ),
        ({**GOOD, "answers": "10%"}, "answers", "must be a list of strings"),
    ],
)
def test_errors_name_file_line_and_field(tmp_path, row, field, words):
    err = error(tmp_path, GOOD | {"id": "t0"}, row)
    assert err.file and err.file.endswith("attacks.jsonl")
    assert err.line == 2 and err.field == field
    assert words in str(err) and "line 2" in str(err)


def test_duplicate_ids_name_both_lines(tmp_path):
    err = error(tmp_path, GOOD, GOOD)
    assert err.field == "id" and "first at line 1, again at line 2" in str(err)


def test_golden_question_files_still_reject_type(tmp_path):
    # The extra key is the attack loader's, not the golden format's.
    with pytest.raises(InputError) as info:
        load_questions(write(tmp_path, GOOD))
    assert info.value.field == "type"


# -- the bundled demo attacks ------------------------------------------------------------
@pytest.fixture(scope="module")
def demo():
    data = demo_data_dir()
    docs = {d.id: d for d in load_corpus(data / "corpus.jsonl")}
    return docs, load_attack_cases(data / "attacks.jsonl", corpus_ids=set(docs))


def test_demo_has_at_least_four_cases_of_every_type(demo):
    _, cases = demo
    counts = Counter(attack_type(c) for c in cases)
    assert set(counts) == set(ATTACK_TYPES) and min(counts.values()) >= 4, counts
    assert all(c.meta.get("trap") for c in cases)  # each says what the trap is


def test_demo_expected_strings_are_in_the_evidence(demo):
    docs, cases = demo
    for case in cases:
        exp = case.expected
        evidence = " ".join(docs[d].text for d in exp.evidence_doc_ids)
        if exp.answers:
            assert any(contains_answer(evidence, a) for a in exp.answers), case.id
        for c in exp.contains:
            assert contains_answer(evidence, c), (case.id, c)


def test_demo_excluded_values_are_real_traps(demo):
    docs, cases = demo

    def holders(text):
        return {i for i, d in docs.items() if contains_answer(d.text, text)}

    for case in cases:
        exp, kind = case.expected, attack_type(case)
        for x in exp.excludes:
            found = holders(x)
            if kind == "entity_collision":
                # the competing entity's value is in the corpus (often the same document)
                assert found, (case.id, x)
            else:
                assert not found & set(exp.evidence_doc_ids), (case.id, x)
            if kind == "temporal_conflict":
                # the stale value comes from the archived version the current one replaces
                archived = {i for i in found if docs[i].metadata.get("status") == "archived"}
                assert archived, (case.id, x)


def test_demo_temporal_and_citation_traps_use_the_corpus_versions(demo):
    docs, cases = demo
    for case in cases:
        if attack_type(case) in ("temporal_conflict", "citation_trap"):
            assert all(
                docs[d].metadata["status"] == "current" for d in case.expected.evidence_doc_ids
            ), case.id
    traps = {
        d for c in cases if attack_type(c) == "citation_trap" for d in c.expected.evidence_doc_ids
    }
    assert "pol-warranty" in traps and "pol-warranty-draft" not in traps


def test_demo_unanswerable_questions_name_nothing_the_corpus_holds(demo):
    docs, cases = demo
    text = " ".join(d.title + " " + d.text for d in docs.values()).lower()
    for term in ("chief executive", "kayak", "population", "marry", "married", "wi-fi"):
        assert term not in text
    assert sum(attack_type(c) == "unanswerable" for c in cases) >= 4

"""Validates the bundled demo corpus and golden questions (src/probeguard/demo/data).

Reads the files with plain ``json`` through ``importlib.resources`` so that it does not depend
on the dataset loaders, and checks the traps the data is meant to hold: archived vs current
policies, a near-duplicate draft, Plus/Pro entity collisions, long answer-bearing sentences,
multi-hop bridges that no single document answers, and questions the corpus cannot answer.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from importlib import resources
from typing import Any

import pytest

from probeguard.nlp.text import contains_answer, normalize_answer, split_sentences, words

DOC_KEYS = {"id", "title", "text", "metadata"}
QUESTION_KEYS = {"id", "question", "answers", "evidence_doc_ids", "mode", "tags"}
STATUSES = {"current", "archived", "draft"}
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

# Words whose absence from the whole corpus makes each unanswerable question unanswerable.
UNANSWERABLE_TERMS = {
    "How many business days does standard delivery to Brazil take?": ["brazil"],
    "What is the monthly price of the Kestrel Elite plan?": ["elite"],
    "Whom did Ilse Varda marry?": ["marry", "married", "husband", "spouse", "wife"],
}

# Bridge questions: (document that holds the answer, the question's subject it must NOT name).
# If the answer document named the subject, one document would answer the question alone.
BRIDGES = {
    "On which river lies the birthplace of Ilse Varda?": ("enc-marrowby", "Varda"),
    "In which city was the company that manufactured the Varda hygrograph founded?": (
        "enc-ostrel-finch",
        "hygrograph",
    ),
    "Which river flows through the city where Tobias Renn was born?": ("enc-castaby", "Renn"),
    "In what year did the hometown of the hygrograph's inventor receive its market charter?": (
        "enc-marrowby",
        "Varda",
    ),
}


def _read_jsonl(name: str) -> list[dict[str, Any]]:
    path = resources.files("probeguard.demo").joinpath("data", name)
    raw = path.read_bytes()
    assert raw.endswith(b"\n"), f"{name}: missing final newline"
    rows = []
    for lineno, line in enumerate(raw.decode("utf-8").split("\n")[:-1], 1):
        assert line.strip(), f"{name}:{lineno}: blank line"
        row = json.loads(line)
        assert isinstance(row, dict), f"{name}:{lineno}: not a JSON object"
        rows.append(row)
    return rows


@pytest.fixture(scope="module")
def docs() -> dict[str, dict[str, Any]]:
    rows = _read_jsonl("corpus.jsonl")
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids)), (
        f"duplicate doc ids: {[i for i, n in Counter(ids).items() if n > 1]}"
    )
    return {row["id"]: row for row in rows}


@pytest.fixture(scope="module")
def questions() -> list[dict[str, Any]]:
    rows = _read_jsonl("questions.jsonl")
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids)), "duplicate question ids"
    return rows


def _tagged(questions: list[dict[str, Any]], tag: str) -> list[dict[str, Any]]:
    found = [q for q in questions if tag in q["tags"]]
    assert found, f"no question tagged {tag!r}"
    return found


def _evidence_text(docs: dict[str, dict[str, Any]], q: dict[str, Any]) -> str:
    return "\n\n".join(docs[i]["text"] for i in q["evidence_doc_ids"])


def test_corpus_schema_and_size(docs: dict[str, dict[str, Any]]) -> None:
    assert 20 <= len(docs) <= 24
    for doc_id, doc in docs.items():
        assert set(doc) == DOC_KEYS, doc_id
        assert all(isinstance(doc[k], str) and doc[k].strip() for k in ("id", "title", "text"))
        md = doc["metadata"]
        assert md["category"] in {"policy", "encyclopedia"}, doc_id
        assert md["status"] in STATUSES, doc_id
        assert isinstance(md["department"], str) and md["department"], doc_id
        if "effective" in md:
            assert DATE.match(md["effective"]), doc_id
        if md["category"] == "policy":
            assert "effective" in md, doc_id
            assert 120 <= len(words(doc["text"])) <= 400, (doc_id, len(words(doc["text"])))
    categories = Counter(d["metadata"]["category"] for d in docs.values())
    assert 6 <= categories["encyclopedia"] <= 8


def test_question_schema(questions: list[dict[str, Any]], docs: dict[str, dict[str, Any]]) -> None:
    assert 24 <= len(questions) <= 32
    for q in questions:
        assert set(q) == QUESTION_KEYS, q["id"]
        assert q["mode"] in {"answer", "abstain"}, q["id"]
        assert isinstance(q["question"], str) and q["question"].endswith("?"), q["id"]
        assert all(isinstance(a, str) and normalize_answer(a) for a in q["answers"]), q["id"]
        assert all(isinstance(t, str) for t in q["tags"]), q["id"]
        missing = [i for i in q["evidence_doc_ids"] if i not in docs]
        assert not missing, f"{q['id']}: unknown evidence ids {missing}"
        assert len(set(q["evidence_doc_ids"])) == len(q["evidence_doc_ids"]), q["id"]


def test_answerable_questions_are_supported_by_their_evidence(
    questions: list[dict[str, Any]], docs: dict[str, dict[str, Any]]
) -> None:
    answerable = [q for q in questions if q["mode"] == "answer"]
    assert len(answerable) >= 21
    for q in answerable:
        assert q["answers"] and q["evidence_doc_ids"], q["id"]
        text = _evidence_text(docs, q)
        assert any(contains_answer(text, a) for a in q["answers"]), q["id"]


def test_unanswerable_questions(
    questions: list[dict[str, Any]], docs: dict[str, dict[str, Any]]
) -> None:
    unanswerable = _tagged(questions, "unanswerable")
    assert 2 <= len(unanswerable) <= 3
    corpus_words = {w for d in docs.values() for w in words(d["title"] + " " + d["text"])}
    for q in unanswerable:
        assert q["mode"] == "abstain" and q["answers"] == [] and q["evidence_doc_ids"] == []
        terms = UNANSWERABLE_TERMS[q["question"]]
        assert not corpus_words.intersection(terms), (q["id"], corpus_words.intersection(terms))
    assert {q["id"] for q in questions if q["mode"] == "abstain"} == {q["id"] for q in unanswerable}


def test_multi_hop_questions_need_two_documents(
    questions: list[dict[str, Any]], docs: dict[str, dict[str, Any]]
) -> None:
    multi = _tagged(questions, "multi-hop")
    assert len(multi) >= 4
    for q in multi:
        assert len(q["evidence_doc_ids"]) >= 2, q["id"]
        # The other document must contribute something: not every evidence doc holds the answer.
        holders = [
            i
            for i in q["evidence_doc_ids"]
            if any(contains_answer(docs[i]["text"], a) for a in q["answers"])
        ]
        assert holders and len(holders) < len(q["evidence_doc_ids"]), q["id"]
    assert {"bridge", "comparison"} <= {t for q in multi for t in q["tags"]}
    bridges = {q["question"]: q for q in _tagged(questions, "bridge")}
    assert set(bridges) == set(BRIDGES)
    for question, (answer_doc, subject) in BRIDGES.items():
        q = bridges[question]
        assert answer_doc in q["evidence_doc_ids"], q["id"]
        assert any(contains_answer(docs[answer_doc]["text"], a) for a in q["answers"]), q["id"]
        assert subject.lower() not in docs[answer_doc]["text"].lower(), q["id"]


def _numbers(text: str) -> set[str]:
    return set(re.findall(r"\d+(?:[.,]\d+)?", text))


def test_archived_and_current_versions_disagree(docs: dict[str, dict[str, Any]]) -> None:
    archived = [d for d in docs.values() if d["metadata"]["status"] == "archived"]
    assert archived
    assert "pol-refund-2022" in {d["id"] for d in archived}
    for old in archived:
        new = docs[old["metadata"]["superseded_by"]]
        assert new["metadata"]["status"] == "current"
        assert new["metadata"]["supersedes"] == old["id"]
        assert new["metadata"]["category"] == old["metadata"]["category"]
        assert old["metadata"]["effective"] < new["metadata"]["effective"]
        assert _numbers(old["text"]) - _numbers(new["text"]), old["id"]
        assert _numbers(new["text"]) - _numbers(old["text"]), old["id"]
    assert contains_answer(docs["pol-refund-2024"]["text"], "30 days")
    assert not contains_answer(docs["pol-refund-2022"]["text"], "30 days")
    assert contains_answer(docs["pol-refund-2022"]["text"], "14 days")
    assert not contains_answer(docs["pol-refund-2024"]["text"], "14 days")


def test_temporal_questions_separate_the_versions(
    questions: list[dict[str, Any]], docs: dict[str, dict[str, Any]]
) -> None:
    temporal = _tagged(questions, "temporal")
    assert len(temporal) >= 4
    for q in temporal:
        (doc_id,) = q["evidence_doc_ids"]
        md = docs[doc_id]["metadata"]
        asks_archive = "archived" in q["tags"]
        assert md["status"] == ("archived" if asks_archive else "current"), q["id"]
        other = docs[md["superseded_by"] if asks_archive else md["supersedes"]]
        # At least one accepted answer is in the right version and absent from the other.
        assert any(
            contains_answer(docs[doc_id]["text"], a) and not contains_answer(other["text"], a)
            for a in q["answers"]
        ), q["id"]


def test_near_duplicate_draft_differs_in_one_number(
    questions: list[dict[str, Any]], docs: dict[str, dict[str, Any]]
) -> None:
    drafts = [d for d in docs.values() if d["metadata"]["status"] == "draft"]
    assert len(drafts) == 1
    draft = drafts[0]
    original = docs[draft["metadata"]["near_duplicate_of"]]
    assert original["metadata"]["status"] == "current"
    a, b = words(original["text"]), words(draft["text"])
    assert len(a) == len(b)
    diffs = [(x, y) for x, y in zip(a, b) if x != y]
    assert len(diffs) == 1 and all(t.isdigit() for t in diffs[0]), diffs
    for q in _tagged(questions, "near-duplicate"):
        assert q["evidence_doc_ids"] == [original["id"]]
        assert any(
            contains_answer(original["text"], ans) and not contains_answer(draft["text"], ans)
            for ans in q["answers"]
        ), q["id"]


def test_entity_questions_name_one_of_two_similar_plans(
    questions: list[dict[str, Any]], docs: dict[str, dict[str, Any]]
) -> None:
    entity = [q for q in _tagged(questions, "entity") if q["mode"] == "answer"]
    assert len(entity) >= 3
    for q in entity:
        named = {p for p in ("Plus", "Pro") if re.search(rf"\b{p}\b", q["question"])}
        assert len(named) == 1, q["id"]
        text = _evidence_text(docs, q)
        assert "Kestrel Plus" in text and "Kestrel Pro" in text, q["id"]


def test_long_sentences_carry_answers_mid_sentence(
    questions: list[dict[str, Any]], docs: dict[str, dict[str, Any]]
) -> None:
    """Each long-sentence question's answer sits in a 60-90 word sentence, at least 30 words
    after its start and 10 before its end, so a fixed token window can cut it from the
    subject that opens the sentence."""
    long_qs = _tagged(questions, "long-sentence")
    assert len(long_qs) >= 3
    for q in long_qs:
        placed = False
        for doc_id in q["evidence_doc_ids"]:
            for sentence in split_sentences(docs[doc_id]["text"]):
                if not 60 <= len(words(sentence)) <= 90:
                    continue
                toks = normalize_answer(sentence).split()
                for ans in q["answers"]:
                    want = normalize_answer(ans).split()
                    hits = [k for k in range(len(toks)) if toks[k : k + len(want)] == want]
                    if any(k >= 30 and len(toks) - (k + len(want)) >= 10 for k in hits):
                        placed = True
        assert placed, q["id"]


def test_security_faq_quotes_attack_text_as_content(
    docs: dict[str, dict[str, Any]], questions: list[dict[str, Any]]
) -> None:
    quoting = [d for d in docs.values() if d["metadata"].get("quotes_attack_text")]
    assert len(quoting) == 1
    text = quoting[0]["text"]
    assert quoting[0]["metadata"]["status"] == "current"
    assert "ignore your previous instructions" in text.lower()
    assert all(
        q["evidence_doc_ids"] == [quoting[0]["id"]]
        for q in _tagged(questions, "benign-attack-text")
    )
    # Only this benign control carries attack-like text; the other documents are clean.
    others = [
        d["id"]
        for d in docs.values()
        if d is not quoting[0] and "ignore your previous" in d["text"].lower()
    ]
    assert others == []


def test_shipping_lists_served_countries(docs: dict[str, dict[str, Any]]) -> None:
    text = docs["pol-shipping"]["text"]
    for country in ("United States", "Canada", "Germany", "Australia", "New Zealand"):
        assert country in text
    assert "14 countries" in text


def test_rows_fit_the_shared_models(
    docs: dict[str, dict[str, Any]], questions: list[dict[str, Any]]
) -> None:
    """The shapes match ``Document`` and ``Expected`` (extra="forbid"), so loaders can pass
    the rows straight through."""
    from probeguard.core.cases import Expected
    from probeguard.core.documents import Document

    for doc in docs.values():
        assert Document(**doc).id == doc["id"]
    for q in questions:
        expected = Expected(
            mode=q["mode"],
            answers=tuple(q["answers"]),
            evidence_doc_ids=tuple(q["evidence_doc_ids"]),
        )
        assert expected.mode == q["mode"]

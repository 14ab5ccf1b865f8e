"""Names in the synthesizer: proper-noun answer spans with their wh-phrase, and the stricter
entity-collision rule (confusable names, not titles sharing a word)."""

from __future__ import annotations

import numpy as np
import pytest

from probeguard.core.documents import Document
from probeguard.corpus.loaders import load_corpus
from probeguard.dataset.synth import synthesize
from probeguard.dataset.synth_attacks import attack_drafts
from probeguard.dataset.synth_facts import Fact, corpus_vocabulary, facts_of, wh_clause
from probeguard.dataset.synth_names import (
    NameVocabulary,
    confusable,
    edit_distance,
    name_spans,
    name_vocabulary,
)
from probeguard.engine.stages import demo_data_dir

PROPER = NameVocabulary(proper=frozenset({"kestrel", "halvik", "halvic", "vessary"}))


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("Kestrel Plus", "Kestrel Pro", True),  # a shared proper first token
        ("Residential Water Rates", "Commercial Water Rates", True),  # one modifier changed
        ("Refund Policy", "Shipping Policy", True),
        ("Halvik Glassworks", "Halvic Glassworks", True),  # one edit
        ("Water Conservation Rebates", "Residential Water Rates", False),  # only a shared word
        ("Customer Data Retention Policy", "Customer Support", False),  # ordinary first word
        ("Employee Leave Policy", "Staff Travel and Expenses Policy", False),  # two modifiers
        ("Kestrel Ridge", "Kestrel Ridge Outfitters", False),  # one inside the other
        ("Halvik", "Halvic", False),  # one word each
    ],
)
def test_confusable_names(a: str, b: str, expected: bool) -> None:
    assert confusable(a, b, PROPER) is expected
    assert confusable(b, a, PROPER) is expected


def test_edit_distance() -> None:
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("", "abc") == 3
    assert edit_distance("same", "same") == 0


def _doc(doc_id: str, title: str, text: str, **metadata: object) -> Document:
    return Document(id=doc_id, title=title, text=text, metadata=metadata)


def _collisions(docs: list[Document]) -> list[tuple[str, str]]:
    facts = [f for d in docs for f in facts_of(d, name_vocabulary(docs))]
    drafts = attack_drafts(facts, docs, corpus_vocabulary(docs), np.random.default_rng(0))
    return [(d.meta["entity"], d.meta["competitor"]) for d in drafts["entity_collision"]]


def test_titles_sharing_only_a_word_are_no_entity_collision() -> None:
    """Regression: "Water Conservation Rebates" and "Residential Water Rates" share "Water"
    and made entity-collision cases before; they are not confusable."""
    docs = [
        _doc(
            "rebates",
            "Water Conservation Rebates",
            "A rebate for a toilet is paid within 30 days of the request.",
        ),
        _doc(
            "rates",
            "Residential Water Rates",
            "A new account is billed within 60 days of the first reading.",
        ),
    ]
    assert _collisions(docs) == []


def test_titles_with_one_modifier_changed_collide() -> None:
    docs = [
        _doc(
            "res",
            "Residential Water Rates",
            "A new account is billed within 30 days of the first reading.",
        ),
        _doc(
            "com",
            "Commercial Water Rates",
            "A new account is billed within 60 days of the first reading.",
        ),
    ]
    assert sorted(_collisions(docs)) == [
        ("Commercial Water Rates", "Residential Water Rates"),
        ("Residential Water Rates", "Commercial Water Rates"),
    ]


def test_names_with_a_shared_proper_first_token_collide_in_the_texts() -> None:
    docs = [
        _doc(
            "plans",
            "Membership",
            "Members of Kestrel Plus pay a fee of $10 per month for the plan. "
            "Members of Kestrel Pro pay a fee of $25 per month for the plan.",
        ),
        _doc(
            "other",
            "Customer Care",
            "Customer Care answers within 2 business days for Kestrel members.",
        ),
    ]
    assert ("Kestrel Plus", "Kestrel Pro") in _collisions(docs)


TEXT = (
    "The Carrow Dam was designed by Mara Quillon for the town. "
    "Households in the valley draw their water from Lake Tessaly, a reservoir north of the town. "
    "Engineers inspect the Carrow Dam and the Halden Aqueduct every spring, and the lake in autumn. "
    "Mara Quillon taught hydraulics for many years at the institute."
)


def test_names_are_answer_spans_with_a_wh_phrase() -> None:
    """Regression: answer spans were numbers, amounts, percentages and dates only."""
    doc = _doc("dam", "Reservoirs", TEXT)
    facts: dict[str, Fact] = {}
    for fact in facts_of(doc):
        facts.setdefault(fact.answer, fact)  # the first mention of each
    assert facts["Mara Quillon"].kind == "name"
    assert wh_clause(facts["Mara Quillon"]) == "the Carrow Dam was designed by whom for the town"
    assert wh_clause(facts["Lake Tessaly"]).endswith(
        "draw their water from which lake, a reservoir north of the town"
    )
    for fact in facts.values():
        assert doc.text[fact.start : fact.end] == fact.answer
    assert "Households" not in facts  # a capital that only opens a sentence is no name
    assert "Carrow Dam" in facts and "Halden Aqueduct" in facts


def test_a_name_in_the_title_or_common_to_the_corpus_is_no_answer() -> None:
    docs = [_doc(f"d{i}", "Lake Tessaly" if i == 0 else f"Note {i}", TEXT) for i in range(6)]
    vocab = name_vocabulary(docs)
    assert "Mara Quillon" in vocab.common  # in every document
    assert all(f.kind != "name" for d in docs for f in facts_of(d, vocab))
    assert name_spans("Tuesdays and Fridays in March are busy at Lake Tessaly.", vocab) == [
        (42, 54)
    ]


def test_demo_synthesis_asks_for_names_and_keeps_exact_spans() -> None:
    docs = load_corpus(demo_data_dir() / "corpus.jsonl")
    s = synthesize(docs, 120, 0)
    texts = {d.id: d.text for d in docs}
    names = [
        c
        for c in s.golden
        if c.expected.answers and not any(ch.isdigit() for ch in c.expected.answers[0])
    ]
    assert names
    for case in names:
        first = case.meta["evidence"][0]
        assert texts[first["doc_id"]][first["start"] : first["end"]] == case.expected.answers[0]
        assert case.expected.answers[0].lower() not in case.question.lower()

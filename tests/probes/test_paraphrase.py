"""Deterministic paraphrases: each kind's rules, None when nothing changes, seeded choices."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from probeguard.nlp.paraphrase import (
    JARGON,
    KINDS,
    SYNONYMS,
    Paraphrase,
    declarative,
    jargon,
    keywords,
    paraphrase,
    paraphrases,
    question_word,
    synonym,
)


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def body(text: str) -> str:
    """A declarative sentence without its frame ("Tell me ...", "I need to know ...")."""
    for frame in ("Tell me ", "I need to know ", "I would like to know ", "Please tell me "):
        if frame in text:
            return text.split(frame, 1)[1].rstrip(".")
    raise AssertionError(f"no request frame in {text!r}")


# -- declarative ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "question, expected",
    [
        ("How long is the warranty on a tent?", "how long the warranty on a tent is"),
        (
            "When is the support team open on Saturdays?",
            "when the support team is open on Saturdays",
        ),
        (
            "How much is the Plus plan if I pay monthly?",
            "how much the Plus plan is if I pay monthly",
        ),
        ("How long do I have to send an item back?", "how long I have to send an item back"),
        ("What does a year of the Pro plan cost?", "what a year of the Pro plan costs"),
        ("How long does the company keep invoices?", "how long the company keeps invoices"),
        (
            "In which year did the hygrograph win a gold medal?",
            "in which year the hygrograph won a gold medal",
        ),
        ("Whom did the inventor marry?", "whom the inventor married"),
        (
            "Where should staff forward a suspicious email?",
            "where staff should forward a suspicious email",
        ),
        (
            "What restocking fee is charged when I return electronics?",
            "what restocking fee is charged when I return electronics",
        ),
        ("In which city was the company founded?", "in which city the company was founded"),
        (
            "How many weeks of paid leave do employees get?",
            "how many weeks of paid leave employees get",
        ),
        ("Which company bought the glassworks?", "which company bought the glassworks"),
        ("Can I return opened electronics?", "whether I can return opened electronics"),
    ],
)
def test_declarative_inverts_back_to_statement_order(question, expected):
    out = declarative(question, rng())
    assert out is not None and out.endswith(".") and "?" not in out
    assert body(out) == expected


def test_declarative_keeps_a_leading_clause_in_front():
    out = declarative("If I ask for my account to be deleted, how long can it take?", rng())
    assert out is not None
    assert out.startswith("If I ask for my account to be deleted, ")
    assert out.endswith("how long it can take.")


def test_declarative_frame_is_a_seeded_choice():
    q = "How long is the warranty on a tent?"
    outs = {declarative(q, rng(seed)) for seed in range(40)}
    assert len(outs) > 1  # alternatives are used
    assert declarative(q, rng(7)) == declarative(q, rng(7))  # and reproducible


def test_declarative_none_when_already_a_request():
    assert declarative("Tell me the refund window.", rng()) is None
    assert declarative("   ", rng()) is None


# -- keywords ---------------------------------------------------------------------------


def test_keywords_keeps_content_words_once_in_order():
    assert keywords("How long is the warranty on a tent?") == "long warranty tent"
    assert keywords("What is the Kestrel Pro price? The Pro price!") == "Kestrel Pro price"


def test_keywords_none_when_nothing_changes_or_nothing_is_left():
    assert keywords("What is it?") is None
    assert keywords("warranty tent") is None


# -- question_word ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "question, expected",
    [
        ("How many weeks of leave do I get?", "What number of weeks of leave do I get?"),
        ("Who was born earlier, Ilse or Tobias?", "Which person was born earlier, Ilse or Tobias?"),
        ("Which company bought the firm?", "What company bought the firm?"),
        ("In what year did the town get its charter?", "When did the town get its charter?"),
        ("Where should staff forward an email?", None),  # two alternatives: checked below
    ],
)
def test_question_word_rules(question, expected):
    out = question_word(question, rng())
    if expected is not None:
        assert out == expected
    else:
        assert out in {
            "In which place should staff forward an email?",
            "In what location should staff forward an email?",
        }


def test_question_word_rewrites_the_asking_word_not_a_subordinate_when():
    out = question_word("What restocking fee is charged when I return electronics?", rng())
    assert out == "Which restocking fee is charged when I return electronics?"
    out = question_word("When I return an item, how long does the refund take?", rng(1))
    assert out is not None and out.startswith("When I return an item, ")
    assert out.endswith(
        ("for how long does the refund take?", "what length of time does the refund take?")
    )


def test_question_word_alternatives_follow_the_seed():
    q = "When was the town made a market town?"
    outs = {question_word(q, rng(seed)) for seed in range(30)}
    assert outs == {
        "At what time was the town made a market town?",
        "In what year was the town made a market town?",
    }


def test_question_word_none_without_a_rewritable_wh_word():
    assert question_word("Can I return opened electronics?", rng()) is None
    assert question_word("What is the late fee?", rng()) is None  # "what is": no safe rule


# -- synonym and jargon -----------------------------------------------------------------


def test_synonym_replaces_and_inflects():
    assert synonym("Which employees may buy gear?", rng()) in {
        "Which staff members may purchase equipment?",
        "Which workers may purchase equipment?",
        "Which staff members may purchase kit?",
        "Which workers may purchase kit?",
    }
    out = synonym("What did the company buy in 2019?", rng())
    assert out is not None and "purchase in 2019" in out
    out = synonym("Which firm bought the glassworks?", rng())
    assert out == "Which company purchased the glassworks?"


def test_synonym_keeps_names_case_and_articles_right():
    out = synonym("Buy an item at the Return Centre?", rng())
    assert out is not None
    assert out.startswith("Purchase ")  # sentence-initial capital kept
    assert "Return Centre" in out  # capitalised name inside the sentence kept
    assert "a product" in out or "an article" in out  # a/an agree with the replacement


def test_synonym_uses_noun_or_verb_entries_by_context():
    noun = synonym("How soon is the refund issued?", rng())
    assert noun is not None and "the repayment" in noun
    assert "granted" in noun or "given out" in noun
    verb = synonym("Can you refund my order?", rng())
    assert verb is not None and ("repay" in verb or "pay back" in verb)


def test_synonym_none_when_no_word_is_in_the_table():
    assert synonym("Who was born earlier, Ilse Varda or Tobias Renn?", rng()) is None


def test_jargon_register():
    out = jargon("How long does a refund take when I delete my account?", rng())
    assert out is not None
    assert "reimbursement" in out and ("erase" in out or "purge" in out)
    assert jargon("Was the order refunded?", rng()) == "Was the purchase order reimbursed?"
    assert jargon("Is it free for free?", rng()) == "Is it complimentary at no charge?"


def test_tables_are_substantial_and_never_map_a_word_to_itself():
    assert sum(len(v) for v in SYNONYMS.values()) >= 300
    assert sum(len(v) for v in JARGON.values()) >= 120
    for table in (SYNONYMS, JARGON):
        for key, alts in table.items():
            word = key.split("/")[0]
            assert all(a.replace("*", "").lower() != word for a in alts), key


# -- dispatch and properties ------------------------------------------------------------


def test_paraphrase_dispatch_and_unknown_kind():
    assert paraphrase("How long is the warranty?", "keywords", rng()) == "long warranty"
    with pytest.raises(ValueError, match="unknown paraphrase kind"):
        paraphrase("How long?", "llm", rng())


def test_paraphrases_gives_each_kind_its_own_stream():
    q = "How many days does a customer have to return an item for a refund?"
    out = paraphrases(q, lambda kind: rng(len(kind)))
    assert [p.kind for p in out] == list(KINDS)
    assert all(isinstance(p, Paraphrase) and p.text != q for p in out)
    # Dropping a kind does not change the others (independent streams).
    fewer = paraphrases(q, lambda kind: rng(len(kind)), kinds=("synonym", "jargon"))
    assert fewer == [p for p in out if p.kind in ("synonym", "jargon")]


_WORDS = [
    "how",
    "what",
    "when",
    "which",
    "who",
    "where",
    "many",
    "long",
    "is",
    "does",
    "did",
    "do",
    "can",
    "the",
    "a",
    "an",
    "my",
    "customer",
    "employee",
    "buy",
    "refund",
    "refunds",
    "bought",
    "return",
    "item",
    "order",
    "ship",
    "shipped",
    "fee",
    "delete",
    "account",
    "Kestrel",
    "Pro",
    "free",
    "for",
    "to",
    "of",
    "in",
    "30",
    "days",
    "cost",
    "warranty",
    "tent",
    "staff",
    "paid",
    "leave",
    "if",
    "I",
    "it",
    ",",
]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=12), st.integers(0, 2**32 - 1))
def test_no_kind_ever_returns_the_question_unchanged(words, seed):
    question = " ".join(words).replace(" ,", ",").capitalize() + "?"
    for kind in KINDS:
        first = paraphrase(question, kind, rng(seed))
        again = paraphrase(question, kind, rng(seed))
        assert first == again
        if first is not None:
            assert first.strip()
            norm = lambda s: " ".join(s.lower().split()).rstrip("?.!")
            assert norm(first) != norm(question)

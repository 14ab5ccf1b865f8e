"""Atomic claim decomposition on hand-written answers: sentences, clauses, borrowed
subjects, pronouns, citations, hedges and offsets."""

from __future__ import annotations

import pytest

from probeguard.detectors.claims import (
    decompose,
    factual,
    is_hedge,
    is_unverifiable,
    subject_of,
)


def texts(answer: str) -> list[str]:
    return [c.text for c in decompose(answer)]


def test_sentences_become_claims_and_citations_are_stripped_but_kept():
    answer = (
        "Customers may return items within 30 days of delivery [1]. "
        "Refunds are issued within 5 business days [1, 2]."
    )
    claims = decompose(answer)
    assert [c.text for c in claims] == [
        "Customers may return items within 30 days of delivery.",
        "Refunds are issued within 5 business days.",
    ]
    assert [c.citations for c in claims] == [(1,), (1, 2)]
    assert [c.sentence for c in claims] == [0, 1]


def test_offsets_point_into_the_answer():
    answer = "The plan costs $12 per month and includes free shipping [2]. It renews monthly."
    for c in decompose(answer):
        assert 0 <= c.start < c.end <= len(answer)
        source = answer[c.start : c.end]
        assert source.strip() and source in answer
    first, second, third = decompose(answer)
    assert answer[first.start : first.end] == "The plan costs $12 per month"
    assert answer[second.start : second.end].startswith("includes free shipping")


def test_clauses_split_only_when_both_sides_have_a_verb():
    assert texts("Returns take 30 days, and refunds take 5 days.") == [
        "Returns take 30 days.",
        "Refunds take 5 days.",
    ]
    assert texts("Returns take 30 days; refunds take 5 days.") == [
        "Returns take 30 days.",
        "Refunds take 5 days.",
    ]
    # no verb on the right: a list of nouns, one claim
    assert texts("We ship to Canada and Mexico.") == ["We ship to Canada and Mexico."]
    assert texts("The office is open between 9 a.m. and 5 p.m. on weekdays.") == [
        "The office is open between 9 a.m. and 5 p.m. on weekdays."
    ]
    # the verb belongs to a subject that began before "and" (a comma closes it)
    one = (
        "Opened electronics, such as headlamps, GPS units and satellite messengers, are "
        "subject to a 10% restocking fee."
    )
    assert texts(one) == [one]
    # a verb far into the right side belongs to a relative clause
    two = "Renn was an engineer and clockmaker, known for a barometer that was carried on ships."
    assert texts(two) == [two]


def test_a_citation_marker_before_a_capital_ends_a_sentence():
    answer = "The charter was granted by the abbots of Os [1] Marrowby is a market town [2]."
    claims = decompose(answer)
    assert [c.text for c in claims] == [
        "The charter was granted by the abbots of Os.",
        "Marrowby is a market town.",
    ]
    assert [c.citations for c in claims] == [(1,), (2,)]


def test_a_verb_first_clause_borrows_the_subject():
    claims = decompose("The Kestrel Plus plan costs $12 per month and includes free shipping.")
    assert [c.text for c in claims] == [
        "The Kestrel Plus plan costs $12 per month.",
        "The Kestrel Plus plan includes free shipping.",
    ]
    assert claims[1].resolved == "The Kestrel Plus plan"


def test_leading_pronouns_take_the_previous_subject():
    claims = decompose("Kestrel Plus is a paid plan. It costs $12 per month. Its price is fixed.")
    assert [c.text for c in claims] == [
        "Kestrel Plus is a paid plan.",
        "Kestrel Plus costs $12 per month.",
        "Kestrel Plus's price is fixed.",
    ]
    assert claims[1].resolved == "Kestrel Plus"
    assert (
        texts("The Halvik mill was a wool mill. It opened in 1859.")[1]
        == "The Halvik mill opened in 1859."
    )
    # a determiner is not a pronoun
    assert (
        texts("Opened electronics carry a fee. This fee applies to headlamps.")[1]
        == "This fee applies to headlamps."
    )


def test_hedges_are_flagged_not_dropped():
    claims = decompose("I don't know: the provided context does not contain the answer.")
    assert len(claims) == 1 and claims[0].hedge and factual(claims) == []
    claims = decompose(
        "Refunds take 5 days. I'm not sure about gift cards, please contact support."
    )
    assert [c.hedge for c in claims] == [False, True]
    assert is_hedge("As an AI, I cannot verify this.") and not is_hedge("Refunds take 5 days.")


def test_subject_and_empty_answer():
    assert subject_of("The Kestrel Plus plan costs $12.") == "The Kestrel Plus plan"
    assert subject_of("Costs $12.") is None
    assert decompose("") == [] and decompose("   ") == []
    assert texts("[1]") == []


def test_decompose_memo_returns_a_new_list_each_call():
    answer = "Refunds are issued within 5 business days. Shipping is free."
    first = decompose(answer)
    first.pop()
    first.append(first[0])
    assert [c.text for c in decompose(answer)] == [
        "Refunds are issued within 5 business days.",
        "Shipping is free.",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Do you play guitar?", True),
        ("Cheerleaders are awesome!", True),
        ("I loved listening to the sounds when I was younger.", True),
        ("i believe it was.", True),
        ("It makes me wonder.", True),
        ("Yes, I like Nirvana.", True),
        ("Returns take 30 days.", False),
        ("You can return items within 30 days.", False),
        ("Elizabeth I was queen of England.", False),  # a regnal number, not a speaker
        ("World War I ended in 1918.", False),
        ("My Chemical Romance formed in 2001.", False),  # a name
    ],
)
def test_unverifiable_claims(text, expected):
    assert is_unverifiable(text) is expected


@pytest.mark.parametrize("answer", ["Yes.", "No.", "No, it does not.", "Yes, it does."])
def test_yes_and_no_answers_stay_factual_claims(answer):
    """A yes/no answer asserts the question's proposition or its negation: whatever rule
    drops content-free clauses (interjections, thanks) must keep it a claim."""
    claims = decompose(answer)
    assert len(claims) == 1 and factual(claims) == claims and not claims[0].hedge

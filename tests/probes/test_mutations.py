"""Text mutations: each kind, not-applicable cases, determinism, and never the identity."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from probeguard.nlp.mentions import date_mentions, number_mentions
from probeguard.probes.entity_names import NameVocab, corpus_names, find_names
from probeguard.probes.mutation_date import mutate_date
from probeguard.probes.mutation_entity import mutate_entity
from probeguard.probes.mutation_negation import mutate_negation
from probeguard.probes.mutation_number import mutate_number
from probeguard.probes.mutations import mutate, near_duplicate


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def check_replacement(source: str, m) -> None:
    """The mutation's bookkeeping is exact and it changed something."""
    assert m.text != source
    assert m.old != m.new
    assert source[m.start : m.end] == m.old
    assert m.text[m.new_start : m.new_end] == m.new
    assert m.text == source[: m.start] + m.new + source[m.end :]


# -- number -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, prefix, suffix",
    [
        ("Customers may return items within 30 days of delivery.", "", ""),
        ("Kestrel Plus costs $12 per month.", "$", ""),
        ("Opened electronics carry a 10% restocking fee.", "", "%"),
        ("The fee is 12 percent of the price.", "", " percent"),
        ("The stove costs €6.95 in the sale.", "€", ""),
    ],
)
def test_number_keeps_the_format_and_changes_the_value(text, prefix, suffix):
    for seed in range(10):
        m = mutate_number(text, rng(seed))
        assert m is not None and m.kind == m.change == "number"
        check_replacement(text, m)
        assert m.old.startswith(prefix) and m.new.startswith(prefix)
        assert m.old.endswith(suffix) and m.new.endswith(suffix)
        old, new = number_mentions(m.old)[0], number_mentions(m.new)[0]
        assert new.value != old.value and new.value > 0
        assert new.kind == old.kind and new.decimals == old.decimals
        if old.kind == "percent":
            assert new.value <= 100


def test_number_keeps_separators_decimals_and_words():
    m = mutate_number("The tent costs 1,299.00 dollars.", rng(1))
    assert m is not None and "," in m.new and m.new.split(".")[1].__len__() == 2
    m = mutate_number("Thirty days are allowed.", rng(2))
    assert m is not None and m.new[0].isupper() and not any(ch.isdigit() for ch in m.new)
    assert number_mentions(m.new)[0].value != 30


def test_number_changes_only_inside_the_span_and_avoids_the_context():
    text = "Items cost $5 to ship and arrive within 14 days."
    span = (text.index("14"), text.index("14") + len("14 days"))
    context = text + " Express orders arrive within 7 days; 21 days for islands; 28 days max."
    for seed in range(20):
        m = mutate_number(text, rng(seed), within=span, context=context)
        assert m is not None and m.old == "14"
        new = number_mentions(m.new)[0].value
        assert new not in {5, 14, 7, 21, 28}


def test_clock_hours_stay_hours():
    for seed in range(10):
        m = mutate_number("Saturday: 9 a.m. to 5 p.m.", rng(seed))
        assert m is not None and 1 <= int(m.new) <= 12 and m.new != m.old


@pytest.mark.parametrize(
    "text",
    [
        "There is nothing to count here.",
        "Call +1 (802) 555-0147 for help.",  # an identifier, not a quantity
        "The museum opened in 1889.",  # a year is a date
        "It takes effect on 1 March 2024.",
    ],
)
def test_number_not_applicable(text):
    assert mutate_number(text, rng()) is None


@settings(max_examples=80, deadline=None)
@given(
    value=st.integers(min_value=0, max_value=99_999),
    decimals=st.integers(0, 2),
    seed=st.integers(0, 2**32 - 1),
    grouped=st.booleans(),
)
def test_number_is_never_the_identity(value, decimals, seed, grouped):
    number = value / 10**decimals
    digits = f"{number:,.{decimals}f}" if grouped else f"{number:.{decimals}f}"
    text = f"The price is ${digits} today."
    m = mutate_number(text, rng(seed))
    assert m is not None
    check_replacement(text, m)
    assert number_mentions(m.new)[0].value != number_mentions(m.old)[0].value


# -- date ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, fmt",
    [
        ("The policy takes effect on 1 March 2024 for all stores.", "dmy"),
        ("The policy takes effect on March 1, 2024 for all stores.", "mdy"),
        ("The policy takes effect on 2024-03-01 for all stores.", "iso"),
        ("Carried-over days must be used by March 31, or they are lost.", "md"),
    ],
)
def test_date_changes_the_month_and_keeps_the_style(text, fmt):
    for seed in range(10):
        m = mutate_date(text, rng(seed))
        assert m is not None and m.kind == "date"
        check_replacement(text, m)
        before, after = date_mentions(text)[0], date_mentions(m.text)[0]
        assert after.format == fmt
        assert (after.year, after.day) == (before.year, before.day)
        assert after.month != before.month


def test_year_is_shifted_by_at_most_twelve():
    seen = set()
    for seed in range(30):
        m = mutate_date("The mill was built in 1889 by the river.", rng(seed))
        assert m is not None and m.old == "1889"
        shift = int(m.new) - 1889
        assert shift != 0 and abs(shift) <= 12
        seen.add(shift)
    assert len(seen) > 3  # the shift is drawn, not fixed


def test_date_avoids_dates_in_the_context():
    context = "Opened in 1889; rebuilt in 1890, 1891, 1888 and 1887."
    for seed in range(20):
        m = mutate_date("It opened in 1889.", rng(seed), context=context)
        assert m is not None and int(m.new) not in {1887, 1888, 1889, 1890, 1891}


def test_date_not_applicable():
    assert mutate_date("Refunds take 5 business days.", rng()) is None
    assert mutate_date("You may return it.", rng()) is None  # "may" is not May


# -- negation -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, expected",
    [
        ("Gift cards are refundable.", "Gift cards are not refundable."),
        ("Gift cards are not refundable.", "Gift cards are refundable."),
        ("The plan can be cancelled at any time.", "The plan cannot be cancelled at any time."),
        ("Worn footwear cannot be returned.", "Worn footwear can be returned."),
        ("The refund isn't issued by post.", "The refund is issued by post."),
        ("Members have 14 days to cancel.", "Members do not have 14 days to cancel."),
        ("Refunds are never issued in cash.", "Refunds are issued in cash."),
        (
            "Footwear that has been worn outdoors cannot be returned.",
            "Footwear that has been worn outdoors can be returned.",
        ),
    ],
)
def test_negation(text, expected):
    m = mutate_negation(text)
    assert m is not None and m.kind == "negation"
    check_replacement(text, m)
    assert m.text == expected


def test_negation_targets_the_verb_governing_the_span():
    text = "Once a return has been inspected, the refund is issued within 5 business days."
    span = (text.index("5 business"), text.index("5 business") + 15)
    m = mutate_negation(text, within=span)
    assert m is not None and m.text.endswith("the refund is not issued within 5 business days.")


def test_negation_not_applicable_without_an_auxiliary():
    assert mutate_negation("Kestrel Plus costs $12 per month.") is None


# -- entity -------------------------------------------------------------------------------
CORPUS = {
    "a": "The Stone Bridge crosses the Avon river near Dunmore. It was built by Hartley Company.",
    "b": "The Old Mill stands on the Lenne river in Castaby. Its owner is Clara Whitby.",
    "c": "Customers may write to Norfield Holdings. Harbor Plus costs $12 per month.",
}


def test_find_names_skips_capitalised_common_words():
    vocab = NameVocab.of([*CORPUS.values(), "Members pay once a year."])
    names = [n for _, _, n in find_names(CORPUS["c"], vocab)]
    assert names == ["Norfield Holdings", "Harbor Plus"]  # not "Customers"
    assert [n for _, _, n in find_names("Tobias Renn was an engineer.", vocab)] == ["Tobias Renn"]
    assert [n for _, _, n in find_names("Once Harbor Plus ends, stop.", vocab)] == ["Harbor Plus"]


def test_entity_swaps_for_a_name_of_the_same_rough_kind():
    vocab = NameVocab.of(CORPUS.values())
    names = corpus_names(CORPUS, vocab)
    candidates = {n: i for n, i in names.items() if i.doc_ids - {"b"}}
    text = CORPUS["b"]
    span = (text.index("Lenne"), text.index("Lenne") + 5)
    m = mutate_entity(text, rng(), candidates, within=span, context=text, vocab=vocab)
    assert m is not None and m.old == "Lenne"
    assert m.new == "Avon"  # the only other name followed by "river"
    check_replacement(text, m)


def test_entity_never_returns_the_original_or_a_name_from_the_context():
    vocab = NameVocab.of(CORPUS.values())
    names = corpus_names(CORPUS, vocab)
    text = CORPUS["b"]
    span = (text.index("Clara"), text.index("Clara") + len("Clara Whitby"))
    for seed in range(20):
        m = mutate_entity(text, rng(seed), names, within=span, context=text, vocab=vocab)
        assert m is not None and m.old == "Clara Whitby"
        assert m.new not in {"Clara Whitby", "Old Mill", "Lenne", "Castaby"}


def test_entity_not_applicable():
    assert mutate_entity("It takes 5 days.", rng(), ["Dunmore"]) is None
    assert mutate_entity("It was built in Dunmore.", rng(), ["Dunmore"]) is None  # no other name


# -- near-duplicate and dispatch ----------------------------------------------------------
def test_near_duplicate_changes_exactly_one_fact_of_the_whole_document():
    doc = (
        "Customers may return unworn shoes within 30 days of delivery. Refunds are issued "
        "within 5 business days. Gift cards are not refundable."
    )
    s0 = doc.index("Refunds")
    s1 = doc.index("Gift") - 1
    span = (doc.index("5 business"), doc.index("5 business") + 15)
    kinds = set()
    for seed in range(20):
        m = near_duplicate(doc, (s0, s1), rng(seed), within=span)
        assert m is not None and m.kind == "near_duplicate" and m.change in {"number", "negation"}
        kinds.add(m.change)
        check_replacement(doc, m)
        assert s0 <= m.start < m.end <= s1
        assert m.text[:s0] == doc[:s0] and m.text.endswith(doc[s1:])
    assert kinds == {"number", "negation"}  # the change kind is drawn


def test_near_duplicate_not_applicable():
    doc = "Phone: +1 (802) 555-0147. Email us."
    assert near_duplicate(doc, (0, 25), rng()) is None


def test_mutations_are_deterministic_in_the_generator():
    text = "Customers may return items within 30 days; the fee is $12 as of 1 March 2024."
    for kind in ("number", "date", "negation"):
        assert mutate(kind, text, rng(7)) == mutate(kind, text, rng(7))
    outcomes = {mutate("number", text, rng(seed)).new for seed in range(20)}
    assert len(outcomes) > 1


def test_unknown_kind():
    with pytest.raises(ValueError, match="unknown mutation kind"):
        mutate("colour", "It is red.", rng())

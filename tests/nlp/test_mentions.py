"""Number mentions of every kind a claim can assert (years, ordinals, decades, numbers in
brackets), read the same way in a claim and in a context; the default reading, which the
number mutation and the conflict defence use, keeps years, ordinals and decades out.
The sentences are real ones from the shared XQuAD file (CC BY-SA 4.0), copied here."""

from __future__ import annotations

import pytest

from probeguard.nlp.mentions import number_mentions, same_number

# XQuAD, Oxygen; Carolina_Panthers (Super Bowl 50); Jacksonville,_Florida; Scottish_Parliament
PRIESTLEY = (
    "Oxygen was discovered independently by Carl Wilhelm Scheele, in Uppsala, in 1773 or "
    "earlier, and Joseph Priestley in Wiltshire, in 1774, but Priestley is often given priority "
    "because his work was published first."
)
KUECHLY = (
    "Davis compiled 5½ sacks, four forced fumbles, and four interceptions, while Kuechly led "
    "the team in tackles (118) forced two fumbles, and intercepted four passes of his own."
)
JACKSONVILLE = (
    "Consolidation gave Jacksonville its great size and placed most of its metropolitan "
    "population within the city limits; with an estimated population of 853,382 in 2014, it is "
    "the most populous city proper in Florida and the Southeast, and the 12th most populous in "
    "the United States."
)
HOUSEHOLDS = (
    "There were 158,349 households, of which 68,511 (43.3%) had children under the age of 18 "
    "living in them, 69,284 (43.8%) were opposite-sex married couples living together, 30,547 "
    "(19.3%) had a female householder with no husband present, 11,698 (7.4%) had a male "
    "householder with no wife present."
)


def _read(text: str, **kw: bool) -> list[tuple[str, float, str]]:
    return [(text[n.start : n.end], n.value, n.kind) for n in number_mentions(text, **kw)]


def test_a_year_is_a_year_with_or_without_a_cue_word():
    assert _read("1774.", every_kind=True) == [("1774", 1774.0, "year")]
    assert ("1774", 1774.0, "year") in _read(PRIESTLEY, every_kind=True)
    assert ("1773", 1773.0, "year") in _read(PRIESTLEY, every_kind=True)
    # a year in a calendar date is that date's field, not a number
    assert _read("It first aired in September 2006.", every_kind=True) == []
    # a count followed by what it counts is no year
    assert _read("about 1500 troops", every_kind=True) == [("1500", 1500.0, "plain")]
    assert _read("1,774 troops", every_kind=True) == [("1,774", 1774.0, "plain")]


def test_numbers_in_brackets_count_but_phone_area_codes_do_not():
    assert ("118", 118.0, "plain") in _read(KUECHLY)
    found = _read(HOUSEHOLDS)
    assert ("19.3%", 19.3, "percent") in found and ("30,547", 30547.0, "plain") in found
    assert _read("Phone: +1 (802) 555-0147.") == []


@pytest.mark.parametrize(
    "text, mention",
    [
        (JACKSONVILLE, ("12th", 12.0, "ordinal")),
        ("Minor amendments were made during the 1960s and 1970s.", ("1970s", 1970.0, "decade")),
        ("in the mid-1970s", ("1970s", 1970.0, "decade")),
        ("the 21st century", ("21st", 21.0, "ordinal")),
    ],
)
def test_ordinals_and_decades_are_mentions_of_their_own_kind(text, mention):
    assert mention in _read(text, every_kind=True)
    # the default reading (number mutation, conflict defence) leaves them out: "1st" cannot
    # become "1.5st", nor "1970s" "2955s"
    assert mention[0] not in [m[0] for m in _read(text)]


def test_the_default_reading_is_unchanged_for_years_in_dates():
    assert _read("It was built in 1889 and costs 1299.") == [("1299", 1299.0, "plain")]


def test_same_number_compares_kinds():
    (year,) = number_mentions("1774.", every_kind=True)
    (count,) = number_mentions("1,774 people", every_kind=True)
    (ordinal,) = number_mentions("the 12th", every_kind=True)
    (twelve,) = number_mentions("12 people", every_kind=True)
    (pct,) = number_mentions("(19.3%)", every_kind=True)
    (plain,) = number_mentions("19.3 points", every_kind=True)
    assert same_number(year, count)  # plain numbers and years are one kind of quantity
    assert not same_number(ordinal, twelve)
    assert not same_number(pct, plain)

"""Number and date checks of the offline judge: every number, year and calendar date of a
claim matched in a sentence, and the conflicts that contradict it (``offline_judge``)."""

from __future__ import annotations

import re

from probeguard.nlp.mentions import (
    DateMention,
    NumberMention,
    date_mentions,
    number_mentions,
    same_kind,
    same_number,
)
from probeguard.nlp.stemming import stem
from probeguard.nlp.text import words

UNIT_SKIP = frozenset({"per", "a", "an", "the", "of", "each", "every", "in"})


def unit_after(text: str, end: int) -> str:
    for w in words(text[end : end + 40]):
        if w not in UNIT_SKIP and not any(ch.isdigit() for ch in w):
            return stem(w)
    return ""


def with_unit(text: str, start: int, end: int) -> str:
    """The number mention and the word after it ("45 days")."""
    m = re.match(r"\s+[A-Za-z][\w'’-]*", text[end:])
    return text[start : end + (m.end() if m else 0)]


def claim_numbers(text: str) -> list[NumberMention]:
    """Every number mention a claim can assert (``every_kind``: years, ordinals, decades and
    numbers in brackets too), read the same way in a claim and in a sentence."""
    return number_mentions(text, every_kind=True)


def calendar_dates(text: str) -> list[DateMention]:
    """Dates with a month or a day; a year alone is a year mention (``claim_numbers``)."""
    return [d for d in date_mentions(text) if d.format != "y"]


def year_values(text: str) -> list[tuple[int, int, int]]:
    """``(year, start, end)`` of every year of ``text``: its year mentions and the years of
    its calendar dates."""
    out = [(int(n.value), n.start, n.end) for n in claim_numbers(text) if n.kind == "year"]
    out += [(d.year, d.start, d.end) for d in calendar_dates(text) if d.year is not None]
    return sorted(out, key=lambda y: y[1])


def number_check(claim: str, sentence: str) -> tuple[bool, list[str]]:
    """(every claim number has an equal one in the sentence, conflicts). A claim year is
    also matched by a calendar date of that year, and conflicts with any other year of the
    sentence; other numbers conflict with a number of the same kind before the same unit
    word."""
    mine, theirs = claim_numbers(claim), claim_numbers(sentence)
    years = year_values(sentence) if any(n.kind == "year" for n in mine) else []
    matched, conflicts = True, []
    for n in mine:
        if any(same_number(m, n) for m in theirs) or (
            n.kind == "year" and any(y == n.value for y, _, _ in years)
        ):
            continue
        matched = False
        if n.kind == "year":
            if years:
                _, ys, ye = years[0]
                conflicts.append(
                    f"the claim says '{claim[n.start : n.end]}' where "
                    f"the context says '{sentence[ys:ye]}'"
                )
            continue
        unit = unit_after(claim, n.end)
        for m in theirs:
            if same_kind(m, n) and m.kind != "year" and unit_after(sentence, m.end) == unit:
                conflicts.append(
                    f"the claim says '{with_unit(claim, n.start, n.end)}' where "
                    f"the context says '{with_unit(sentence, m.start, m.end)}'"
                )
                break
    return matched, conflicts


def date_check(claim: str, sentence: str) -> tuple[bool, list[str]]:
    """(every calendar date of the claim agrees with one of the sentence on every field it
    carries, conflicts). The sentence's years count as dates with a year only."""
    mine = calendar_dates(claim)
    if not mine:
        return True, []
    theirs = [(m.fields(), m.start, m.end) for m in calendar_dates(sentence)]
    theirs += [
        ({"year": int(n.value), "month": None, "day": None}, n.start, n.end)
        for n in claim_numbers(sentence)
        if n.kind == "year"
    ]
    matched, conflicts = True, []
    for d in mine:
        df = d.fields()
        ok, clash = False, None
        for mf, ms, me in theirs:
            shared = [f for f in df if df[f] is not None and mf[f] is not None]
            if not shared:
                continue
            if all(df[f] == mf[f] for f in shared):
                ok = ok or all(mf[f] is not None for f in df if df[f] is not None)
            elif clash is None:
                clash = (ms, me)
        if not ok and clash is not None:
            conflicts.append(
                f"the claim says '{claim[d.start : d.end]}' where the context "
                f"says '{sentence[clash[0] : clash[1]]}'"
            )
        matched = matched and ok
    return matched, conflicts

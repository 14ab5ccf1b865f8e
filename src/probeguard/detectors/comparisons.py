"""Comparative claims for the offline judge: time order between the question's alternatives,
and comparisons that must be stated (``offline_judge`` module doc)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from probeguard.detectors.anchoring import entities
from probeguard.detectors.polarity import TOKEN
from probeguard.detectors.sentences import Sentence, coverage
from probeguard.detectors.value_checks import year_values
from probeguard.nlp.mentions import (
    is_negation,
)
from probeguard.nlp.stemming import stem

TIME_ORDER = {
    **dict.fromkeys("first earlier earliest older oldest sooner".split(), -1),
    **dict.fromkeys("later latest younger youngest newer newest".split(), 1),
}
"""Comparatives of time: −1 claims the earlier date, +1 the later one."""
AMOUNT_ORDER = frozenset(
    """more most less least fewer fewest higher highest lower lowest larger largest smaller
smallest bigger biggest greater greatest longer longest shorter shortest taller tallest
closer closest nearer nearest farther farthest further furthest ranks""".split()
)
"""Comparatives of amount, distance and rank: stated, or unsupported (no order check)."""
PAIR = r"(?:^|[,:]\s*|\b(?:is|are|was|were)\s+)([^,:?]+?)\s+{}\s+([^,:?]+?)(?=[?,.]|\s+(?:the|both)\s|$)"
ALTERNATIVES = re.compile(PAIR.format("or"))
CONJUNCTS = re.compile(PAIR.format("and"))
BOTH = re.compile(r"\bboth\b(?!\s+of\b)", re.IGNORECASE)


def comparatives(claim: str) -> tuple[frozenset[str], int]:
    """Stems of the comparative words of ``claim`` and the time order it claims (−1, +1, 0
    when none): "more than 30" and "no more" bound a number or negate, they compare nothing."""
    raw = TOKEN.findall(claim)
    ws = [w.lower() for w in raw]
    found, order = set(), 0
    for i, w in enumerate(ws):
        nxt = ws[i + 1] if i + 1 < len(ws) else ""
        if w in ("more", "less", "fewer") and (nxt == "than" or (i and is_negation(ws[i - 1]))):
            continue
        if i and raw[i][0].isupper():  # part of a name or title: "And There's More"
            continue
        if w in TIME_ORDER or w in AMOUNT_ORDER:
            found.add(stem(w))
            order = order or TIME_ORDER.get(w, 0)
    return frozenset(found), order


def word_stems(texts: Sequence[str]) -> frozenset[str]:
    """Stems of every word of ``texts``, stopwords included ("most", "more")."""
    return frozenset(stem(w.lower()) for t in texts for w in TOKEN.findall(t))


def alternatives(
    question: str | None, pattern: re.Pattern[str] = ALTERNATIVES
) -> list[frozenset[str]]:
    """The name stems of the two alternatives a question offers ("Who was born first,
    Pablo Trapero or Aleksander Ford?"), or with ``CONJUNCTS`` the two things a text joins
    ("Are both The New Pornographers and Kings of Leon American rock bands?"); empty when
    it offers none."""
    m = pattern.search(question or "")
    if m is None:
        return []
    alts = [entities(m.group(k), frozenset()) for k in (1, 2)]
    return alts if all(alts) and alts[0] != alts[1] else []


def both_things(claim: str, question: str | None) -> list[frozenset[str]]:
    """The things a claim with "both" ("both of" aside) says its predicate of: the two it
    joins with "and" ("Both David Lee Roth and Cia Berg were ..."), else the two its question
    joins with "and" or offers with "or" ("Both are American authors." for "Alan Furst and
    Lee Child are what?"); empty for any other claim."""
    if not BOTH.search(claim):
        return []
    return (
        alternatives(claim, CONJUNCTS)
        or alternatives(question, CONJUNCTS)
        or alternatives(question)
    )


def each_holds(
    terms: frozenset[str],
    things: list[frozenset[str]],
    sentences: Sequence[Sentence],
    support: float,
) -> bool:
    """A "both" claim holds of each thing: for every thing ``t`` some sentence names it (at
    least half of the name stems only ``t`` has) and covers the claim's words outside the
    things' names (``cov ≥ support``)."""
    names = frozenset().union(*things)
    rest = terms - names
    for t in things:
        own = (t - (names - t)) or t
        if not any(
            2 * len(own & (s.own | s.inherited)) >= len(own) and coverage(rest, s) >= support
            for s in sentences
        ):
            return False
    return True


def time_order(
    claim: str, order: int, alts: list[frozenset[str]], sentences: Sequence[Sentence]
) -> bool | None:
    """Whether the dates in ``sentences`` put the claim's alternative first (``order`` −1)
    or last (+1): each alternative's date is the first year of the first sentence that
    names it; None when the claim names no single alternative or one has no date."""
    mine = entities(claim, frozenset())
    named = [a for a in alts if a <= mine]
    if order == 0 or len(named) != 1:
        return None
    years = []
    for a in alts:
        year = next(
            (
                ys[0][0]
                for s in sentences
                if a <= (s.own | s.inherited)
                for ys in [year_values(s.text)]
                if ys
            ),
            None,
        )
        if year is None:
            return None
        years.append(year)
    own = years[alts.index(named[0])]
    others = [y for a, y in zip(alts, years) if a is not named[0]]
    return all((own - y) * order > 0 for y in others)

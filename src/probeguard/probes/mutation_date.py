"""The ``date`` mutation: one date or year moved to a new one written in the same style
(conventions in ``probeguard.probes.mutation_base``).

A date with a month gets another month (drawn uniformly among the months that have the
date's day and give a date absent from ``context``), written in the same style ("1 March
2024" → "1 June 2024", "2024-03-01" → "2024-06-01"); a bare year is shifted by ``±d``, ``d``
drawn from 1–12 (1889 → 1893), to a year absent from ``context``.
"""

from __future__ import annotations

import numpy as np

from probeguard.nlp.mentions import MONTHS, date_mentions
from probeguard.probes.mutation_base import (
    Mutation,
    Span,
    draw_one,
    overlaps_within,
    span_mutation,
)

__all__ = ["mutate_date"]

_DAYS_IN = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def mutate_date(
    text: str, rng: np.random.Generator, *, within: Span | None = None, context: str | None = None
) -> Mutation | None:
    """Shift one date or year (rules in the module docstring)."""
    targets = [d for d in date_mentions(text) if overlaps_within(d.start, d.end, within)]
    if not targets:
        return None
    target = draw_one(rng, targets)
    # Dates already present are parsed generously (any bare year counts): avoid them all.
    known = date_mentions(context if context is not None else text, any_year=True)
    present = {(d.year, d.month, d.day) for d in known}
    if target.month is not None and target.month_span is not None:
        day = target.day or 1
        months = [
            m
            for m in range(1, 13)
            if m != target.month
            and day <= _DAYS_IN[m - 1]
            and (target.year, m, target.day) not in present
        ]
        if not months:
            return None
        month = draw_one(rng, months)
        s, e = target.month_span
        old = text[s:e]
        if target.format == "iso":
            new = f"{month:02d}"
        else:  # the same style: a full name, or a three-letter abbreviation
            new = MONTHS[month - 1] if old in MONTHS else MONTHS[month - 1][:3]
        return span_mutation("date", text, s, e, new)
    if target.year is None or target.year_span is None:
        return None
    years = {d.year for d in known}
    deltas = [d for d in range(-12, 13) if d != 0]
    for i in rng.permutation(len(deltas)):
        year = target.year + deltas[int(i)]
        if 1000 <= year <= 2099 and year not in years:
            s, e = target.year_span
            return span_mutation("date", text, s, e, str(year))
    return None

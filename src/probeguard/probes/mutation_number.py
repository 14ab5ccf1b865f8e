"""The ``number`` mutation: one count, amount, price or percentage changed to a new value in
the same format (conventions in ``probeguard.probes.mutation_base``).

A target is a number that is not a date or an identifier such as a phone number:
``new = old × f`` with ``f`` drawn (without replacement) from ``(1.5, 2, 0.5, 3, 1.25,
0.75)``, rounded half up to the old number of decimals, and accepted when positive,
different from ``old``, absent from ``context`` and, for a percentage, at most 100; failing
every factor, ``old + k`` for the smallest ``k ≥ 1`` that passes. The format is kept:
currency sign, decimals, thousands separators, percent sign, and words for a number written
as a word ("thirty" → "forty-five"). ``30 → 45``, ``$12 → $18``. A clock hour ("9 a.m.")
gets another hour 1–12 drawn uniformly.
"""

from __future__ import annotations

import math
import re

import numpy as np

from probeguard.nlp.mentions import NumberMention, number_mentions, number_word
from probeguard.probes.mutation_base import (
    Mutation,
    Span,
    draw_one,
    overlaps_within,
    span_mutation,
)

__all__ = ["mutate_number"]

_FACTORS = (1.5, 2.0, 0.5, 3.0, 1.25, 0.75)
_CLOCK = re.compile(r"\s?(?:a\.m\.|p\.m\.|am\b|pm\b)", re.IGNORECASE)


def _round_half_up(x: float, decimals: int) -> float:
    scale = 10**decimals
    return math.floor(x * scale + 0.5 + 1e-9) / scale


def _format_number(value: float, decimals: int, grouped: bool) -> str:
    return f"{value:,.{decimals}f}" if grouped else f"{value:.{decimals}f}"


def mutate_number(
    text: str, rng: np.random.Generator, *, within: Span | None = None, context: str | None = None
) -> Mutation | None:
    """Change one number (rules in the module docstring)."""
    targets = [n for n in number_mentions(text) if overlaps_within(n.start, n.end, within)]
    if not targets:
        return None
    target = draw_one(rng, targets)
    avoid = {n.value for n in number_mentions(context if context is not None else text)}
    avoid |= {target.value}

    def ok(v: float) -> bool:
        if v <= 0 or any(math.isclose(v, a, abs_tol=1e-9) for a in avoid):
            return False
        return not (target.kind == "percent" and v > 100)

    new_value: float | None = None
    if _CLOCK.match(text, target.end) and target.decimals == 0 and 1 <= target.value <= 12:
        hours = [float(h) for h in range(1, 13) if ok(float(h))]
        return _number_mutation(text, target, str(int(draw_one(rng, hours)))) if hours else None
    for i in rng.permutation(len(_FACTORS)):
        candidate = _round_half_up(target.value * _FACTORS[int(i)], target.decimals)
        if ok(candidate):
            new_value = candidate
            break
    if new_value is None:
        new_value = next((target.value + k for k in range(1, 1000) if ok(target.value + k)), None)
    if new_value is None:
        return None
    word = number_word(new_value) if target.word else None
    if word is not None:
        old_word = text[target.num_start : target.num_end]
        digits = word.capitalize() if old_word[:1].isupper() else word
    else:
        digits = _format_number(new_value, target.decimals, target.grouped)
    return _number_mutation(text, target, digits)


def _number_mutation(text: str, target: NumberMention, digits: str) -> Mutation:
    """The whole mention is the changed value ("$12" → "$18", "10%" → "15%")."""
    new = text[target.start : target.num_start] + digits + text[target.num_end : target.end]
    return span_mutation("number", text, target.start, target.end, new)

"""What every text mutation shares: the ``Mutation`` value, and the helpers each kind uses to
pick its target and record a one-span replacement.

A mutation is a contradicting version of an evidence sentence or document, with exactly one
fact changed. The kinds (``probeguard.probes.mutations`` dispatches over them) are pure
functions; every choice comes from the ``numpy.random.Generator`` passed in (the
corpus-contradiction probe passes ``ctx.rng(question id, kind)``), so the same inputs give
the same mutation. Each returns ``None`` when it does not apply, and never returns the text
unchanged.

``within=(start, end)`` restricts the change to targets overlapping that span of ``text``
(the probe passes the span of the gold answer); ``context`` is the whole gold document, whose
values the new value must avoid (so that the contradicting value is new to the document, and
an answer quoting it can only have taken it from the injected text).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

import numpy as np

__all__ = ["Mutation", "Span", "draw_one", "overlaps_within", "span_mutation"]

Span = tuple[int, int]
_T = TypeVar("_T")


@dataclass(frozen=True)
class Mutation:
    """A mutated text and what changed in it.

    ``kind`` is the mutation (``near_duplicate`` included); ``change`` the single-fact change
    it made (equal to ``kind`` except for a near-duplicate). ``old`` was at
    ``source[start:end]``; ``new`` is at ``text[new_start:new_end]``.
    """

    kind: str
    change: str
    text: str
    old: str
    new: str
    start: int
    end: int
    new_start: int
    new_end: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def span_mutation(kind: str, source: str, start: int, end: int, new: str) -> Mutation:
    """The ``kind`` mutation of ``source`` that replaces ``source[start:end]`` by ``new``."""
    text = source[:start] + new + source[end:]
    return Mutation(
        kind=kind,
        change=kind,
        text=text,
        old=source[start:end],
        new=new,
        start=start,
        end=end,
        new_start=start,
        new_end=start + len(new),
    )


def overlaps_within(start: int, end: int, within: Span | None) -> bool:
    """Whether ``[start, end)`` overlaps ``within`` (always, when ``within`` is None)."""
    return within is None or (start < within[1] and within[0] < end)


def draw_one(rng: np.random.Generator, items: Sequence[_T]) -> _T:
    """One of ``items``, drawn uniformly."""
    return items[int(rng.integers(len(items)))]

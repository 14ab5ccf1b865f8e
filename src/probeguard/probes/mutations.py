"""Text mutations by kind: ``mutate`` dispatches a single-fact change to its kind's module,
and ``near_duplicate`` applies one to the answer-bearing sentence of a whole document.

The conventions every kind follows (seeded, pure, ``within`` and ``context``, ``None`` when
not applicable, never the text unchanged) are in ``probeguard.probes.mutation_base``. Kinds:

* ``number`` — a count, amount, price or percentage gets a new value in the same format
  (``probeguard.probes.mutation_number``);
* ``date`` — a date gets another month, a bare year another year
  (``probeguard.probes.mutation_date``);
* ``negation`` — the auxiliary or copula that governs the claim is negated or un-negated
  (``probeguard.probes.mutation_negation``);
* ``entity`` — a capitalised name is swapped for a name of the same rough kind from other
  documents (``probeguard.probes.mutation_entity``);
* ``near_duplicate`` — the whole document copied with one of the above applied to the
  answer-bearing sentence (the kind drawn uniformly among those that apply).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from probeguard.probes.entity_names import NameInfo, NameVocab
from probeguard.probes.mutation_base import Mutation, Span, draw_one
from probeguard.probes.mutation_date import mutate_date
from probeguard.probes.mutation_entity import mutate_entity
from probeguard.probes.mutation_negation import mutate_negation
from probeguard.probes.mutation_number import mutate_number

__all__ = ["CHANGE_KINDS", "KINDS", "mutate", "near_duplicate"]

CHANGE_KINDS = ("number", "date", "negation", "entity")
"""Single-fact changes."""
KINDS = (*CHANGE_KINDS, "near_duplicate")
"""Every mutation kind, in the probe's default order."""


def mutate(
    kind: str,
    text: str,
    rng: np.random.Generator,
    *,
    within: Span | None = None,
    context: str | None = None,
    candidates: Mapping[str, NameInfo] | Sequence[str] = (),
    vocab: NameVocab | None = None,
) -> Mutation | None:
    """The single-fact mutation ``kind`` of ``text`` (``number``, ``date``, ``negation``,
    ``entity``), or None when it does not apply."""
    if kind == "number":
        return mutate_number(text, rng, within=within, context=context)
    if kind == "date":
        return mutate_date(text, rng, within=within, context=context)
    if kind == "negation":
        return mutate_negation(text, rng, within=within, context=context)
    if kind == "entity":
        return mutate_entity(text, rng, candidates, within=within, context=context, vocab=vocab)
    raise ValueError(f"unknown mutation kind {kind!r}; known: {', '.join(CHANGE_KINDS)}")


def near_duplicate(
    document: str,
    sentence: Span,
    rng: np.random.Generator,
    *,
    within: Span | None = None,
    candidates: Mapping[str, NameInfo] | Sequence[str] = (),
    kinds: Sequence[str] = CHANGE_KINDS,
    vocab: NameVocab | None = None,
) -> Mutation | None:
    """``document`` with one fact of ``document[sentence[0]:sentence[1]]`` changed: the
    change kind is drawn uniformly among ``kinds`` that apply (each tried with its own child
    stream of ``rng``). Spans (``within`` included) are offsets into ``document``."""
    s0, s1 = sentence
    text = document[s0:s1]
    local = None if within is None else (max(within[0], s0) - s0, min(within[1], s1) - s0)
    # One child stream per kind (drawn in ``kinds`` order), then the choice among those
    # that apply: deterministic in ``rng``'s state.
    seeds = [int(x) for x in rng.integers(0, 2**63 - 1, size=len(kinds))]
    applicable: list[tuple[str, Mutation]] = []
    for kind, seed in zip(kinds, seeds):
        trial = mutate(
            kind,
            text,
            np.random.default_rng(seed),
            within=local,
            context=document,
            candidates=candidates,
            vocab=vocab,
        )
        if trial is not None:
            applicable.append((kind, trial))
    if not applicable:
        return None
    kind, m = draw_one(rng, applicable)
    return Mutation(
        kind="near_duplicate",
        change=kind,
        text=document[:s0] + m.text + document[s1:],
        old=m.old,
        new=m.new,
        start=s0 + m.start,
        end=s0 + m.end,
        new_start=s0 + m.new_start,
        new_end=s0 + m.new_end,
    )

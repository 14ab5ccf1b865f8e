"""The ``entity`` mutation: one capitalised name swapped for a name of the same rough kind
found in other documents (conventions in ``probeguard.probes.mutation_base``; names as
``probeguard.probes.entity_names`` finds them).

A name overlapping ``within`` is swapped for one of ``candidates`` (the names of *other*
documents), excluding names that contain or are contained in it and names present in
``context``; drawn uniformly within the first non-empty tier of "same rough kind" (see
``mutate_entity``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

from probeguard.nlp.text import STOPWORDS, normalize_answer
from probeguard.probes.entity_names import NameInfo, NameVocab, find_names, name_cues
from probeguard.probes.mutation_base import (
    Mutation,
    Span,
    draw_one,
    overlaps_within,
    span_mutation,
)

__all__ = ["mutate_entity"]


def _kind_tiers(
    old: str, old_cues: frozenset[str], pool: Sequence[str], cues: Mapping[str, frozenset[str]]
) -> list[list[str]]:
    n = len(old.split())
    content = {c for c in old_cues if c not in STOPWORDS}
    function = old_cues - content
    return [
        [c for c in pool if content & cues.get(c, frozenset())],
        [c for c in pool if n > 1 and len(c.split()) > 1 and c.split()[-1] == old.split()[-1]],
        [c for c in pool if len(c.split()) == n and function & cues.get(c, frozenset())],
        [c for c in pool if len(c.split()) == n],
        list(pool),
    ]


def mutate_entity(
    text: str,
    rng: np.random.Generator,
    candidates: Mapping[str, NameInfo] | Sequence[str],
    *,
    within: Span | None = None,
    context: str | None = None,
    vocab: NameVocab | None = None,
) -> Mutation | None:
    """Swap one capitalised name for a corpus name of the same rough kind.

    ``candidates``: names from other documents, with their ``NameInfo`` (from
    ``corpus_names``) or as a plain sequence. The draw is uniform within the first non-empty
    tier: names sharing a content-word cue with the original (the words around it: "the
    Lenne river" and "the Dorn river" share "river"); multi-word names with the same last
    word ("Brenholt Group", "Ostrel Group"); names of the same length sharing a function-word
    cue ("in Castaby", "in Marrowby"); names of the same length; any name."""
    names = [n for n in find_names(text, vocab) if overlaps_within(n[0], n[1], within)]
    if not names:
        return None
    s, e, old = draw_one(rng, names)
    info = dict(candidates) if isinstance(candidates, Mapping) else {}
    cue_of = {c: i.cues for c, i in info.items()}
    ctx = f" {normalize_answer(context if context is not None else text)} "
    old_norm = normalize_answer(old)
    pool = []
    for c in sorted(candidates):
        c_norm = normalize_answer(c)
        if not c_norm or c_norm in old_norm or old_norm in c_norm or f" {c_norm} " in ctx:
            continue
        pool.append(c)
    if not pool:
        return None
    old_cues = frozenset(name_cues(text, s, e))
    if context is not None:
        for m in re.finditer(r"(?<![\w’'-])" + re.escape(old) + r"(?![\w’'-])", context):
            old_cues |= name_cues(context, m.start(), m.end())
    tier = next(t for t in _kind_tiers(old, old_cues, pool, cue_of) if t)
    return span_mutation("entity", text, s, e, draw_one(rng, tier))

"""Question anchoring for the offline judge: the question's words, value answers that need
them, and bridges across chunks for multi-hop questions (``offline_judge`` module doc)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from probeguard.detectors.claims import is_bare
from probeguard.detectors.sentences import Sentence, claim_terms, coverage
from probeguard.detectors.value_checks import claim_numbers
from probeguard.nlp.mentions import (
    date_mentions,
)
from probeguard.nlp.stemming import stem
from probeguard.nlp.support import question_terms
from probeguard.nlp.text import STOPWORDS

NAME = re.compile(r"\b[A-Z][\w'’-]*")
"""A capitalised word (hyphens and apostrophes kept: "Skiffle-Bluesband", "O'Neill")."""

FRAMING = frozenset(
    stem(w)
    for w in "type kind sort name named called term form happen happened out along however".split()
)
"""Words that frame a question rather than say what it is about ("what *type* of ...")."""


@lru_cache(maxsize=4096)
def question_words(question: str | None) -> frozenset[str]:
    """``Q``: the question's stemmed content words (``question_terms`` ∩ ``T``: no fillers,
    light verbs, negation cues or digits), framing words ("type", "name") left out."""
    if not question:
        return frozenset()
    return (question_terms(question) & claim_terms(question)) - FRAMING


def entities(text: str, q: frozenset[str]) -> frozenset[str]:
    """Stems of the capitalised words of ``text`` outside ``Q`` and stopwords, hyphenated
    names split ("Skiffle-Bluesband" → skiffl, bluesband): the entities a bridge can name."""
    return capitalised(text) - q


@lru_cache(maxsize=8192)
def capitalised(text: str) -> frozenset[str]:
    """``entities`` before ``Q`` is taken out (per sentence, memoised)."""
    out = set()
    for m in NAME.finditer(text):
        for part in re.split(r"[-'’]", m.group(0).lower()):
            if len(part) > 1 and part not in STOPWORDS:
                out.add(stem(part))
    return frozenset(out)


def answers_itself(claim: str, text: str) -> bool:
    """``text`` holds a value of the kind of the claim's values (a year for a year, a plain
    number for a plain number; a calendar date for a year or a date): a sentence about the
    question that holds one answers it itself, so it lends its words to no other sentence of
    its chunk."""
    kinds = {n.kind for n in claim_numbers(claim)}
    if any(m.kind in kinds for m in claim_numbers(text)):
        return True
    dated = "year" in kinds or bool(date_mentions(claim))
    return dated and any(d.format != "y" for d in date_mentions(text))


def find_bridges(
    q: frozenset[str], sentences: Sequence[Sequence[Sentence]], anchor: float
) -> list[list[Sentence]]:
    """For each chunk, its bridges (module docstring): the sentences of the *other* chunks
    about the question (``covq ≥ anchor``) that name an entity outside ``Q`` the chunk holds,
    and its own sentences about the question (``answers_itself`` leaves some out per claim)."""
    about = [
        [(s, entities(s.text, q)) for s in chunk if coverage(q, s) >= anchor] for chunk in sentences
    ]
    held = [frozenset().union(*(s.own for s in chunk)) for chunk in sentences]
    return [
        [b for m, bs in enumerate(about) for b, e in bs if m == k or e & held[k]]
        for k in range(len(sentences))
    ]


def needs_anchor(claim: str, terms: frozenset[str]) -> bool:
    """A claim judged with its question's words: a bare claim (no verb-ish word) that is a
    number, year or date with at most a unit word ("1774", "25", "30 times", "the 1970s") or
    has no content words at all. Such a value is true of many sentences; only the question
    says which one it answers. Bare *entity* answers ("Denver Broncos") carry their own
    words and are judged on them."""
    if not terms:
        return True
    if not is_bare(claim):
        return False
    has_value = bool(claim_numbers(claim) or date_mentions(claim))
    return has_value and len(terms) <= 1


def anchored_coverage(q: frozenset[str], s: Sentence, bridges: Sequence[Sentence]) -> float:
    """``covq`` of ``s``, or of ``s`` joined with one of its chunk's bridges when higher."""
    best = coverage(q, s)
    for b in bridges:
        joined = Sentence(s.text, s.start, s.end, s.own | b.own, s.inherited)
        best = max(best, coverage(q, joined))
    return best

"""Query expansion with the paraphrase probe's synonym and jargon tables.

The tables (``probeguard.nlp.paraphrase.SYNONYMS`` and ``JARGON``: ``return/v → send back,
give back``; ``send back → remit``; ...) are read as an undirected graph of phrases: each key
(its ``/n`` / ``/v`` tag dropped) is linked to each of its alternatives (``*`` marks dropped).
Phrases and the query are compared as sequences of stemmed words (``probeguard.nlp.stemming.
stem``, so "returns" meets "return"). Every phrase found in the query — except one lying
inside a longer phrase found there ("send" inside "send back") — adds its neighbours (one
hop) that the query does not already hold, in order of appearance::

    "How many days do I have to send back an item?"
      → "... send back an item? return remit product article unit goods"

The expanded query goes to the retriever (and re-ranker); the generator still gets the
question as asked. Irregular forms outside the stemmer ("sent back") are not matched.
"""

from __future__ import annotations

from functools import lru_cache

from probeguard.nlp.paraphrase import JARGON, SYNONYMS
from probeguard.nlp.stemming import stem
from probeguard.nlp.text import words

__all__ = ["expand_query", "expansion_terms"]


def _stems(text: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in words(text))


@lru_cache(maxsize=1)
def _graph() -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    """(stemmed phrase, its neighbours as text) for every phrase of the two tables."""

    links: dict[str, list[str]] = {}

    def link(a: str, b: str) -> None:
        if a != b:
            links.setdefault(a, [])
            if b not in links[a]:
                links[a].append(b)

    for table in (SYNONYMS, JARGON):
        for key, alts in table.items():
            base = key.split("/", 1)[0].strip().lower()
            for alt in alts:
                phrase = alt.replace("*", "").strip().lower()
                link(base, phrase)
                link(phrase, base)
    return tuple((_stems(p), tuple(n)) for p, n in links.items() if _stems(p))


def _contains(haystack: tuple[str, ...], needle: tuple[str, ...]) -> int:
    """Index of the first occurrence of ``needle`` in ``haystack``, or -1."""
    n = len(needle)
    for i in range(len(haystack) - n + 1):
        if haystack[i : i + n] == needle:
            return i
    return -1


def expansion_terms(question: str) -> list[str]:
    """The phrases the expansion adds to ``question`` (module docstring)."""
    query = _stems(question)
    found: list[tuple[int, int, int, tuple[str, ...]]] = []
    for order, (phrase, neighbours) in enumerate(_graph()):
        at = _contains(query, phrase)
        if at >= 0:
            found.append((at, at + len(phrase), order, neighbours))
    found = [
        f
        for f in found
        if not any(g[0] <= f[0] and f[1] <= g[1] and g[1] - g[0] > f[1] - f[0] for g in found)
    ]
    added: list[str] = []
    for _, _, _, neighbours in sorted(found, key=lambda f: (f[0], f[2])):
        for n in neighbours:
            if n not in added and _contains(query, _stems(n)) < 0:
                added.append(n)
    return added


def expand_query(question: str) -> str:
    """``question`` followed by its expansion terms (unchanged when there are none)."""
    terms = expansion_terms(question)
    return f"{question} {' '.join(terms)}" if terms else question

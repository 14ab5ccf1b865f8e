"""Sentences of a chunk as the offline judge reads them (stems, anaphora) and the
coverage ``cov`` of a claim's words by a sentence (``probeguard.detectors.offline_judge``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from probeguard.detectors.synonyms import synonym_cover
from probeguard.nlp.mentions import (
    NEGATION_CUES,
    date_mentions,
)
from probeguard.nlp.stemming import stem
from probeguard.nlp.support import analysed_sentences
from probeguard.nlp.text import STOPWORDS, content_words, word_spans

LIGHT = frozenset({"have", "has", "had", "get", "gets", "got"})
ANAPHORA = 0.75
SYNONYM_FLOOR = 0.25
"""Synonyms count in a sentence that holds at least this share of the claim's words itself
(one that shares nothing with the claim is not made about it by a synonym; and it bounds
the look-ups)."""


@lru_cache(maxsize=16384)
def claim_terms(text: str) -> frozenset[str]:
    return frozenset(
        stem(w)
        for w in content_words(text)
        if w not in NEGATION_CUES
        and not w.endswith(("n't", "n’t"))
        and w not in LIGHT
        and not any(ch.isdigit() for ch in w)
    )


@lru_cache(maxsize=16384)
def claim_names(text: str) -> frozenset[str]:
    """Stems of capitalised words after the first word, outside dates. The words are
    ``words``' tokens, as in the sentences' stems: "D.C." is one name, "d.c"."""
    dates = [(d.start, d.end) for d in date_mentions(text)]
    first = re.match(r"\s*\S+", text)
    skip = first.end() if first else 0
    out = set()
    for token, start, _ in word_spans(text):
        if not token[0].isupper() or start < skip or any(s <= start < e for s, e in dates):
            continue
        w = token.lower()
        if w not in STOPWORDS:
            out.add(stem(w))
    return frozenset(out)


NAME_LINKS = frozenset("of the de da di du von van der del la le for".split())
"""Lower-case words inside a name ("Kings *of* Leon", "Hall *of* Fame"); "and" parts names."""
NAME_GAP = " \t\n&\"'“”‘’"
"""What may stand between two words of one name: spaces, "&", quotes ('the "Billboard" Hot
100'); a comma, a bracket or a full stop ends a name."""


@lru_cache(maxsize=16384)
def name_runs(text: str, first: bool = True) -> tuple[tuple[str, ...], ...]:
    """The names of ``text``: runs of capitalised words parted by ``NAME_GAP`` only,
    ``NAME_LINKS`` allowed inside, as their stems in order,
    stopwords and links left out ("Panama City Air Force Base" → panama, city, air, forc,
    base). ``first=False`` leaves the first word out (a claim's first word is capitalised
    whatever it is: "Eastern North America" for "eastern North America")."""
    runs: list[list[str]] = []
    current: list[str] = []
    prev_end: int | None = None
    for k, (token, start, end) in enumerate(word_spans(text)):
        joined = prev_end is not None and text[prev_end:start].strip(NAME_GAP) == ""
        prev_end = end
        if not joined or not (token[0].isupper() or token in NAME_LINKS):
            runs.append(current)
            current = []
        if token[0].isupper() and token.lower() not in STOPWORDS and (first or k):
            current.append(stem(token.lower()))
    if current:
        runs.append(current)
    return tuple(tuple(r) for r in runs if r)


def in_order(part: tuple[str, ...], whole: tuple[str, ...]) -> bool:
    it = iter(whole)
    return all(p in it for p in part)


def names_in_order(claim: str, texts: list[str]) -> bool:
    """Every name of several words of ``claim`` (``name_runs``, its first word left out: it
    is a name to find by ``claim_names`` alone) is, in order, within one name of one of
    ``texts``: "Richard Hawley" is within "Richard Willis Hawley"; "Panama City Air Force
    Base" is not within "Tyndall Air Force Base ... Panama City"."""
    mine = [r for r in name_runs(claim, first=False) if len(r) > 1]
    if not mine:
        return True
    theirs = [r for t in texts for r in name_runs(t)]
    return all(any(in_order(r, w) for w in theirs) for r in mine)


@dataclass(frozen=True)
class Sentence:
    text: str
    start: int
    end: int
    own: frozenset[str]
    inherited: frozenset[str]


@lru_cache(maxsize=8192)
def chunk_sentences(text: str) -> tuple[Sentence, ...]:
    """The extractive generator's sentence analysis (stems and one-step anaphora, cached),
    with each sentence's span in ``text`` (memoised: a tuple of frozen sentences)."""
    out: list[Sentence] = []
    pos = 0
    for sentence, own, inherited, _ in analysed_sentences(text):
        start = text.find(sentence, pos)
        start = pos if start < 0 else start
        pos = start + len(sentence)
        out.append(Sentence(sentence, start, pos, own, inherited))
    return tuple(out)


def coverage(terms: frozenset[str], sentence: Sentence) -> float:
    """``cov`` (module docstring); 0.0 for no terms: a claim without content words is about
    nothing on its own (its about-ness must come from its question, ``_anchor``)."""
    if not terms:
        return 0.0
    own, inherited = sentence.own, sentence.inherited
    held = len(terms & own)
    if held == len(terms):
        return 1.0
    extra = synonym_cover(terms, own) if held >= SYNONYM_FLOOR * len(terms) else frozenset()
    if extra:
        own, inherited = own | extra, inherited - extra
    return (len(terms & own) + ANAPHORA * len(terms & inherited)) / len(terms)


SPREAD = 3
"""Most sentences of one chunk whose words together may support a claim (``spread``)."""


def set_coverage(terms: frozenset[str], group: Sequence[Sentence]) -> float:
    """``cov`` of ``terms`` by the union of ``group``'s sentences: own words of any of them
    count 1, words only inherited through a pronoun ``ANAPHORA``; 0.0 for no terms."""
    if not terms or not group:
        return 0.0
    own = frozenset().union(*(s.own for s in group))
    own |= synonym_cover(terms, own)
    inherited = frozenset().union(*(s.inherited for s in group)) - own
    return (len(terms & own) + ANAPHORA * len(terms & inherited)) / len(terms)


@lru_cache(maxsize=16384)
def value_words(text: str) -> frozenset[str]:
    """The content words of ``text`` that hold a digit ("50", "1774"), as sentence stems
    keep them: what ``spread`` must also gather for the claim's numbers."""
    return frozenset(w for w in content_words(text) if any(ch.isdigit() for ch in w))


def spread(terms: frozenset[str], sentences: Sequence[Sentence]) -> tuple[Sentence, ...]:
    """The sentences of one chunk that together cover most of ``terms``, greedily: the
    sentence of highest ``cov`` first, then, up to ``SPREAD`` sentences, the one that adds
    most of the claim's words not yet covered (ties: the earlier), while one adds any
    (``terms`` may hold ``value_words`` too: a sentence that adds a number counts).
    Linear in the chunk's sentences (``SPREAD`` passes); returned in chunk order."""
    chosen: list[int] = []
    covered: frozenset[str] = frozenset()
    for _ in range(SPREAD):
        gains = [
            (len((terms - covered) & (s.own | s.inherited)), -i)
            for i, s in enumerate(sentences)
            if i not in chosen
        ]
        if not gains:
            break
        gain, neg = max(gains)
        if chosen and gain == 0:
            break
        chosen.append(-neg)
        covered |= terms & (sentences[-neg].own | sentences[-neg].inherited)
    return tuple(sentences[i] for i in sorted(chosen))


def best_sentence(claim: str, text: str) -> tuple[str, tuple[int, int] | None, float]:
    """The sentence of ``text`` that covers most of ``claim``'s words (``cov`` above), its
    span and its ``cov``; ``("", None, 0.0)`` for a text without sentences."""
    terms = claim_terms(claim)
    best: tuple[str, tuple[int, int] | None, float] = ("", None, 0.0)
    for s in chunk_sentences(text):
        cov = coverage(terms, s)
        if cov > best[2] or best[1] is None:
            best = (s.text, (s.start, s.end), cov)
    return best

"""Synonyms and irregular verb forms for the offline judge's coverage: a claim word the
sentence lacks is still covered when the sentence says it in other words.

Tables (package data, ``probeguard.nlp.data``, read through ``nlp.paraphrase.lexicon`` and
``nlp.wordlists``): the general-English synonym table (``synonyms.tsv``: "buy" ~
"purchase", "return" ~ "send back") and the irregular simple pasts (``irregular_past.tsv``:
"win" ~ "won", "buy" ~ "bought"), both read in both directions, words stemmed
(``nlp.stemming.stem``) and content words only. The related-wording table of the retrieval
probes is not read: "film" ~ "picture" is too loose to support a claim.

**Rule.** With ``T`` the claim's stems and ``S`` a sentence's::

    extra(T, S) = {t ∈ T − S : some alternative A of t has all its stems in S,
                               or lemma_key(t) = lemma_key(s) for some s ∈ S}
                ∪ {t ∈ P : P ⊆ T − S an alternative phrase of some s ∈ S}

(``lemma_key``: forms the light stemmer leaves apart, "married"/"marries", "died"/"dies").
So "send back" (two claim words) is covered by a sentence saying "return", and "return" by
one saying "send back". Each lookup is a dictionary probe per uncovered claim word and per
sentence word that heads a phrase: linear in the words, no pairwise search.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache, lru_cache

from probeguard.nlp.paraphrase.lexicon import PAST, tables
from probeguard.nlp.stemming import stem
from probeguard.nlp.text import content_words

__all__ = ["alternatives", "lemma_key", "synonym_cover"]


def _stems(phrase: str) -> frozenset[str]:
    return frozenset(stem(w) for w in content_words(phrase.replace("*", "")))


def _pairs() -> Iterable[tuple[str, str]]:
    for key, entry in tables()["synonym"].items():
        for alt in (*entry.any, *entry.noun, *entry.other):
            yield key, alt
    yield from PAST.items()


@cache
def alternatives() -> Mapping[str, tuple[frozenset[str], ...]]:
    """Stem → the stem sets of its alternatives, both directions (module docstring)."""
    out: dict[str, set[frozenset[str]]] = {}
    for a, b in _pairs():
        sa, sb = _stems(a), _stems(b)
        if not sa or not sb or sa == sb:
            continue
        for one, other in ((sa, sb), (sb, sa)):
            if len(one) == 1:
                out.setdefault(next(iter(one)), set()).add(other)
    return {k: tuple(sorted(v, key=sorted)) for k, v in out.items()}


_VOWELS = frozenset("aeiouy")


@lru_cache(maxsize=65536)
def lemma_key(word: str) -> str:
    """A key on which the stems of one word's forms meet where the light stemmer leaves
    them apart (both sides keyed, so the key only has to be consistent): a final "i" read
    as "y" ("married" → "marri" ~ "marries" → "marry"), a short "-ied" as "-ie" ("died" ~
    "dies" → "die"), a doubled final consonant single ("stopped" → "stopp" ~ "stop")."""
    if len(word) == 4 and word.endswith("ied"):
        return word[:-1]
    if len(word) > 3 and word.endswith("i"):
        return word[:-1] + "y"
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in _VOWELS and word[-1].isalpha():
        return word[:-1]
    return word


@lru_cache(maxsize=16384)
def _keys(stems: frozenset[str]) -> frozenset[str]:
    return frozenset(lemma_key(s) for s in stems)


@cache
def _phrase_heads() -> frozenset[str]:
    """The stems with an alternative of several words (the only ones a sentence's word can
    lend a phrase through)."""
    return frozenset(k for k, alts in alternatives().items() if any(len(a) > 1 for a in alts))


@lru_cache(maxsize=16384)
def _claim_index(terms: frozenset[str]) -> tuple[tuple[str, str, tuple[frozenset[str], ...]], ...]:
    """Each claim stem with its ``lemma_key`` and alternatives (read once per claim)."""
    table = alternatives()
    return tuple((t, lemma_key(t), table.get(t, ())) for t in terms)


def synonym_cover(terms: frozenset[str], stems: frozenset[str]) -> frozenset[str]:
    """``extra(T, S)`` of the module docstring: the claim stems ``terms`` that ``stems``
    (a sentence's) does not hold but states in other words."""
    if terms <= stems:
        return frozenset()
    keys = _keys(stems)
    out = {
        t
        for t, key, alts in _claim_index(terms)
        if t not in stems and (key in keys or any(alt <= stems for alt in alts))
    }
    heads = stems & _phrase_heads()
    if heads:
        missing = terms - stems
        table = alternatives()
        for head in heads:
            for alt in table[head]:
                if len(alt) > 1 and alt <= missing:
                    out |= alt
    return frozenset(out)

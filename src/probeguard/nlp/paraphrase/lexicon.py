"""The paraphrase rules' words: closed word classes, the verb lexicon and the synonym and
jargon tables.

The small closed classes the rules branch on (wh-words, auxiliaries, relatives) are written
here; every longer list is package data (``probeguard/nlp/data``, read once by
``probeguard.nlp.wordlists``; the folder's README gives each list's source and licence).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from probeguard.nlp.wordlists import word_list, word_table

__all__ = [
    "AUXILIARIES",
    "AUX_BE",
    "AUX_DO",
    "AUX_MODAL",
    "DETERMINERS",
    "DOUBLE_FINAL",
    "IRREGULAR_PARTICIPLES",
    "IRREGULAR_SOURCE",
    "JARGON",
    "NOT_PARTICIPLES",
    "NOUN_ADJECTIVES",
    "PARTICIPLE_SAME_AS_PAST",
    "PAST",
    "PREDICATE_ADJECTIVES",
    "PREPOSITIONS",
    "RELATIVES",
    "SUBJECT_PRONOUNS",
    "SUBORDINATORS",
    "SYNONYMS",
    "TableEntry",
    "VERB_BASES",
    "VERB_KEYS",
    "VOWELS",
    "WH_WORDS",
    "parse_table",
    "tables",
]

# -- closed classes ------------------------------------------------------------------------
WH_WORDS = frozenset({"what", "which", "who", "whom", "whose", "when", "where", "why", "how"})
AUX_DO = frozenset({"do", "does", "did"})
AUX_BE = frozenset({"is", "are", "was", "were"})
AUX_MODAL = frozenset("can could will would should shall may might must has have had".split())
AUXILIARIES = AUX_DO | AUX_BE | AUX_MODAL
RELATIVES = frozenset({"that", "which", "who", "whom", "whose"})
SUBJECT_PRONOUNS = frozenset({"he", "she", "it", "who", "that", "which", "this", "one"})
VOWELS = frozenset("aeiou")

# -- lists shipped as package data -----------------------------------------------------------
PREPOSITIONS = frozenset(word_list("prepositions"))
DETERMINERS = frozenset(word_list("determiners"))
SUBORDINATORS = frozenset(word_list("subordinators"))
NOUN_ADJECTIVES = frozenset(word_list("noun_adjectives"))
"""Adjectives after which a word reads as a noun ("paid leave", "late fee")."""
VERB_BASES = frozenset(word_list("verbs"))
"""Base forms of common verbs (where the declarative rule finds the main verb)."""

PAST: Mapping[str, str] = {verb: past for verb, past in word_table("irregular_past")}
"""Simple past of irregular verbs (for "did X <verb>" → "X <past>")."""
PARTICIPLE_SAME_AS_PAST = frozenset(word_list("participle_same_as_past"))
"""Irregular verbs whose past equals their past participle: an "-ed" surface form can be
re-inflected onto them without knowing which of the two it was."""
IRREGULAR_PARTICIPLES = frozenset(word_list("irregular_participles"))
PREDICATE_ADJECTIVES = frozenset(word_list("predicate_adjectives"))
NOT_PARTICIPLES = frozenset(word_list("not_participles"))
"""Words in -ed that are not participles ("need", "hundred")."""
DOUBLE_FINAL = frozenset(word_list("double_final"))
"""Stress-final verbs whose last consonant doubles before -ed/-ing ("permit" → "permitted")."""

VERB_KEYS = VERB_BASES | frozenset(word_list("table_verbs"))
"""Table keys that are verbs: only these take a stripped -ed/-ing back onto a replacement."""
IRREGULAR_SOURCE: Mapping[str, tuple[str, str]] = {
    form: (base, suffix) for form, base, suffix in word_table("irregular_sources")
}
"""Irregular surface forms and the (table key, suffix) they stand for ("bought" → buy + ed)."""


# -- the synonym and jargon tables -------------------------------------------------------------
@dataclass(frozen=True)
class TableEntry:
    """A table key's alternatives: in any position, as a noun only, or elsewhere only."""

    any: tuple[str, ...] = ()
    noun: tuple[str, ...] = ()
    other: tuple[str, ...] = ()


def parse_table(rows: Sequence[Sequence[str]], name: str = "table") -> dict[str, TableEntry]:
    """``{key: TableEntry}`` from rows ``(key[/n|/v], "alt, alt")``."""
    raw: dict[str, dict[str, tuple[str, ...]]] = {}
    for number, (key, alts) in enumerate(rows, start=1):
        key = key.strip().lower()
        pos = "any"
        if key.endswith("/n"):
            key, pos = key[:-2], "noun"
        elif key.endswith("/v"):
            key, pos = key[:-2], "other"
        values = tuple(a.strip() for a in alts.split(",") if a.strip())
        if not values:
            raise ValueError(f"paraphrase {name} row {number}: no alternatives for {key!r}")
        raw.setdefault(key, {})[pos] = values
    return {k: TableEntry(**v) for k, v in raw.items()}


@cache
def tables() -> dict[str, dict[str, TableEntry]]:
    """The parsed tables by name: ``"synonym"`` and ``"jargon"`` (the paraphrase kinds) and
    ``"related"`` (general factual-question wording, read by the targeted rewordings)."""
    return {
        "synonym": parse_table(word_table("synonyms"), "synonyms"),
        "jargon": parse_table(word_table("jargon"), "jargon"),
        "related": parse_table(word_table("related"), "related"),
    }


def _flat(kind: str) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for key, entry in tables()[kind].items():
        for pos, alts in (("", entry.any), ("/n", entry.noun), ("/v", entry.other)):
            if alts:
                out[key + pos] = alts
    return out


SYNONYMS: Mapping[str, tuple[str, ...]] = _flat("synonym")
"""The synonym table (``key`` or ``key/n`` / ``key/v`` → alternatives), for readers and tests."""
JARGON: Mapping[str, tuple[str, ...]] = _flat("jargon")
"""The jargon table, same form as ``SYNONYMS``."""

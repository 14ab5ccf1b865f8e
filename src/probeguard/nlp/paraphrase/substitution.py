"""The ``synonym`` and ``jargon`` paraphrases: every word of the question found in a table
(``probeguard.nlp.paraphrase.lexicon``: ``SYNONYMS``, ``JARGON``) replaced, inflected like the
word it replaces, with "a"/"an" fixed before it (rules in ``probeguard.nlp.paraphrase``'s
docstring)."""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np

from probeguard.nlp.paraphrase.forms import add_s, ing, match_case, past_or_participle, same
from probeguard.nlp.paraphrase.lexicon import (
    DETERMINERS,
    IRREGULAR_SOURCE,
    NOUN_ADJECTIVES,
    PREPOSITIONS,
    SUBJECT_PRONOUNS,
    VERB_KEYS,
    VOWELS,
    TableEntry,
    tables,
)

__all__ = ["base_readings", "jargon", "substitute", "substitute_with", "synonym"]


def base_readings(word: str) -> list[tuple[str, str]]:
    """(base, suffix) readings of a surface word, most literal first."""
    out = [(word, "")]
    if word in IRREGULAR_SOURCE:
        out.append(IRREGULAR_SOURCE[word])
    if len(word) < 4:
        return out
    if word.endswith("ies"):
        out.append((word[:-3] + "y", "s"))
    if word.endswith("es"):
        out += [(word[:-2], "s"), (word[:-1], "s")]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        out.append((word[:-1], "s"))
    if word.endswith("ied"):
        out.append((word[:-3] + "y", "ed"))
    elif word.endswith("ed"):
        out += [(word[:-2], "ed"), (word[:-1], "ed")]
        if len(word) > 4 and word[-3] == word[-4]:
            out.append((word[:-3], "ed"))
    if word.endswith("ing") and len(word) > 5:
        out += [(word[:-3], "ing"), (word[:-3] + "e", "ing")]
        if word[-4] == word[-5]:
            out.append((word[:-4], "ing"))
    return out


def _inflect(alt: str, suffix: str) -> str | None:
    """``alt`` with ``suffix`` applied to its head word (``*``-marked, else the last)."""
    parts = alt.split(" ")
    head = next((i for i, p in enumerate(parts) if p.endswith("*")), len(parts) - 1)
    parts = [p.rstrip("*") for p in parts]
    word = parts[head]
    if suffix == "s":
        parts[head] = add_s(word)
    elif suffix == "ed":
        form = past_or_participle(word)
        if form is None:
            return None
        parts[head] = form
    elif suffix == "ing":
        parts[head] = ing(word)
    return " ".join(parts)


def _noun_context(prev: str | None, suffix: str) -> bool:
    """Whether a word reads as a noun after ``prev`` (see the module docstring)."""
    if suffix in ("ed", "ing"):
        return False
    if prev is None:
        return True  # a question opens with its wh-word: a content word first is a query noun
    if (
        prev in DETERMINERS
        or prev.endswith(("'s", "’s"))
        or prev in NOUN_ADJECTIVES
        or (prev in PREPOSITIONS and prev != "to")
        or prev.endswith("al")
        or prev.isdigit()
    ):
        return True
    return suffix == "s" and prev not in SUBJECT_PRONOUNS


def _lookup(
    table: Mapping[str, TableEntry], word: str, prev: str | None
) -> tuple[tuple[str, ...], str] | None:
    for base, suffix in base_readings(word):
        entry = table.get(base)
        if entry is None:
            continue
        if suffix == "ing" and prev in DETERMINERS:
            return None  # "the building": a noun in -ing, not a verb form
        if suffix in ("ed", "ing") and base not in VERB_KEYS:
            return None  # "discounted" is not "discount" + -ed of a verb we can re-inflect
        if _noun_context(prev, suffix) and entry.noun:
            return entry.noun, suffix
        if not _noun_context(prev, suffix) and entry.other:
            return entry.other, suffix
        if entry.any:
            return entry.any, suffix
        return None
    return None


_TOKEN = re.compile(r"[A-Za-z]+(?:['’-][A-Za-z]+)*")
_SENTENCE_END = re.compile(r"[.!?]\s*$")


def substitute(question: str, table_name: str, rng: np.random.Generator) -> str | None:
    """Replace every word of ``question`` found in the named table (``"synonym"``,
    ``"jargon"`` or ``"related"``); None when no word changes. Phrase keys (two or three words)
    are matched first."""
    return substitute_with(question, tables()[table_name], rng)


def substitute_with(
    question: str, table: Mapping[str, TableEntry], rng: np.random.Generator
) -> str | None:
    """``substitute`` with a table given as parsed entries (the targeted rewordings pass a
    table cut down to the words they aim at)."""
    matches = list(_TOKEN.finditer(question))
    pieces: list[str] = []
    replaced_at: list[bool] = []  # per emitted word piece: was it replaced?
    word_pieces: list[int] = []  # indexes into pieces of emitted words
    pos = 0
    i = 0
    changed = False
    prev_word: str | None = None
    while i < len(matches):
        m = matches[i]
        at_sentence_start = i == 0 or bool(_SENTENCE_END.search(question[: m.start()]))
        surface = m.group(0)
        # Phrase keys: up to three words joined by single spaces, matched literally.
        phrase_hit = None
        for n in (3, 2):
            if i + n <= len(matches):
                span = matches[i : i + n]
                if all(question[a.end() : b.start()] == " " for a, b in zip(span, span[1:])):
                    key = " ".join(x.group(0).lower() for x in span)
                    entry = table.get(key)
                    if (
                        entry is not None
                        and entry.any
                        and not any(x.group(0)[:1].isupper() for x in span[1:])
                    ):
                        phrase_hit = (n, entry.any)
                        break
        if phrase_hit is not None:
            n, alts = phrase_hit
            alt = alts[int(rng.integers(len(alts)))].replace("*", "")
            pieces.append(question[pos : m.start()])
            word_pieces.append(len(pieces))
            pieces.append(match_case(surface, alt) if at_sentence_start else alt)
            replaced_at.append(True)
            pos = matches[i + n - 1].end()
            prev_word = alt.split(" ")[-1].lower()
            changed = True
            i += n
            continue
        pieces.append(question[pos : m.start()])
        word_pieces.append(len(pieces))
        replacement = None
        is_name = surface[:1].isupper() and not at_sentence_start
        is_acronym = len(surface) > 1 and surface.isupper()
        if not is_name and not is_acronym:
            found = _lookup(table, surface.lower(), prev_word)
            if found is not None:
                alts, suffix = found
                order = [int(k) for k in rng.permutation(len(alts))]
                for k in order:
                    inflected = _inflect(alts[k], suffix)
                    if inflected is not None and inflected.lower() != surface.lower():
                        replacement = match_case(surface, inflected)
                        break
        pieces.append(replacement if replacement is not None else surface)
        replaced_at.append(replacement is not None)
        changed = changed or replacement is not None
        prev_word = (replacement or surface).split(" ")[-1].lower()
        pos = m.end()
        i += 1
    pieces.append(question[pos:])
    if not changed:
        return None
    _fix_articles(pieces, word_pieces, replaced_at)
    out = "".join(pieces)
    return None if same(out, question) else out


_CONSONANT_SOUND = re.compile(r"^(uni|use|usu|uti|eu|one|once|ewe)", re.I)
_VOWEL_SOUND = re.compile(r"^(hour|honest|honou?r|heir)", re.I)


def _vowel_sound(word: str) -> bool:
    """Whether ``word`` starts with a vowel sound (by spelling, with the common exceptions:
    "a unit", "a one-off", "an hour")."""
    if _VOWEL_SOUND.match(word):
        return True
    if _CONSONANT_SOUND.match(word):
        return False
    return word[:1].lower() in VOWELS


def _fix_articles(pieces: list[str], word_pieces: list[int], replaced: list[bool]) -> None:
    """ "a"/"an" before a replaced word agrees with the word's first sound."""
    for j in range(1, len(word_pieces)):
        if not replaced[j]:
            continue
        art_at = word_pieces[j - 1]
        article = pieces[art_at]
        if article.lower() not in ("a", "an"):
            continue
        wanted = "an" if _vowel_sound(pieces[word_pieces[j]]) else "a"
        pieces[art_at] = match_case(article, wanted)


def synonym(question: str, rng: np.random.Generator) -> str | None:
    """General-English synonym substitution (``SYNONYMS``); None when no word changes."""
    return substitute(question, "synonym", rng)


def jargon(question: str, rng: np.random.Generator) -> str | None:
    """Formal/technical register substitution (``JARGON``); None when no word changes."""
    return substitute(question, "jargon", rng)

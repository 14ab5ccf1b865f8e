"""Capitalised names in text, told apart from capitalised common words, and the corpus's
inventory of names with the words around them: what the ``entity`` mutation swaps and the
names it swaps in (``probeguard.probes.mutation_entity``)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from probeguard.nlp.mentions import MONTHS
from probeguard.nlp.text import STOPWORDS

__all__ = ["NameInfo", "NameVocab", "corpus_names", "find_names", "name_cues"]

_NAME = re.compile(
    r"(?<![\w@.])[A-Z][\w’'-]*(?:\s+(?:&\s+|of\s+(?:the\s+)?|de\s+|van\s+|von\s+)?[A-Z][\w’'-]*)*"
)
_CAP_WORD = re.compile(r"(?<![\w@.’'-])[A-Z][\w’'-]*")
_LOWER_WORD = re.compile(r"(?<![\w@.’'-])[a-z][a-z’'-]*(?![\w@])")
_NOT_NAMES = frozenset(MONTHS) | frozenset(
    {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
)
_OPENS = re.compile(r"(?:^|[.!?:;\n\"“(]\s*|\n\s*[-*•]\s*)$")
_ARTICLES = frozenset({"the", "a", "an"})
_POSSESSIVE = re.compile(r"['’]s$")


def _opens_sentence(text: str, start: int) -> bool:
    return start == 0 or bool(_OPENS.search(text[max(0, start - 4) : start]))


def _without_possessive(word: str) -> str:
    return _POSSESSIVE.sub("", word)


@dataclass(frozen=True)
class NameVocab:
    """What tells a name from a capitalised common word: ``capitals``, the capitalised words
    seen somewhere other than at the opening of a sentence ("Kestrel", not "Customers"), and
    ``lower``, the words seen in lower case ("once", "customers")."""

    capitals: frozenset[str]
    lower: frozenset[str]

    @classmethod
    def of(cls, texts: Iterable[str]) -> NameVocab:
        capitals: set[str] = set()
        lower: set[str] = set()
        for text in texts:
            for m in _CAP_WORD.finditer(text):
                if not _opens_sentence(text, m.start()):
                    capitals.add(_without_possessive(m.group(0)))
            lower.update(_LOWER_WORD.findall(text))
        return cls(frozenset(capitals), frozenset(lower))


def find_names(text: str, vocab: NameVocab | None = None) -> list[tuple[int, int, str]]:
    """Capitalised names in ``text`` as ``(start, end, name)``.

    A run of capitalised words (joined by "&", "of (the)", "de", "van", "von") is a name
    once leading words are dropped while they are stopwords, month or weekday names, or open
    a sentence without being ``vocab.capitals`` and either stand alone or are common words
    (in ``vocab.lower``): "Customers may ..." holds no name, "Tobias Renn was ..." and
    "Once Kestrel Plus ..." hold "Tobias Renn" and "Kestrel Plus". A trailing possessive
    "'s" is dropped. ``vocab`` defaults to ``NameVocab.of([text])``; pass the corpus's."""
    vocab = vocab if vocab is not None else NameVocab.of([text])
    out: list[tuple[int, int, str]] = []
    for m in _NAME.finditer(text):
        start, name = m.start(), m.group(0)
        at_start = _opens_sentence(text, start)
        while name:
            parts = name.split()
            first = parts[0]
            bare = _without_possessive(first)
            strip = first.lower() in STOPWORDS or first in _NOT_NAMES
            if not strip and at_start and bare not in vocab.capitals:
                strip = len(parts) == 1 or bare.lower() in vocab.lower
            if not strip:
                break
            stripped = name[len(first) :].lstrip()
            start += len(name) - len(stripped)
            name, at_start = stripped, False
        name = _without_possessive(name)
        if len(name) > 1 and name not in _NOT_NAMES:
            out.append((start, start + len(name), name))
    return out


def name_cues(text: str, start: int, end: int) -> set[str]:
    """The lower-case words just before (articles skipped) and just after a name."""
    cues: set[str] = set()
    before = re.findall(r"[\w’'-]+", text[max(0, start - 40) : start])
    while before and before[-1].lower() in _ARTICLES:
        before.pop()
    if before and before[-1].islower():
        cues.add(before[-1])
    after = re.match(r"\s+([\w’'-]+)", text[end : end + 40])
    if after and after.group(1).islower():
        cues.add(after.group(1))
    return cues


@dataclass(frozen=True)
class NameInfo:
    """Where a corpus name occurs and the words around it (its "rough kind")."""

    doc_ids: frozenset[str]
    cues: frozenset[str]


def corpus_names(texts: Mapping[str, str], vocab: NameVocab | None = None) -> dict[str, NameInfo]:
    """Every name of the corpus (``{doc_id: text}``), sorted, with the documents where it
    occurs and its context cues; a document's entity candidates are the names occurring in
    other documents (see ``mutate_entity``). ``vocab`` defaults to the corpus's."""
    vocab = vocab if vocab is not None else NameVocab.of(texts.values())
    docs: dict[str, set[str]] = {}
    cues: dict[str, set[str]] = {}
    for doc_id, text in texts.items():
        for s, e, name in find_names(text, vocab):
            docs.setdefault(name, set()).add(doc_id)
            cues.setdefault(name, set()).update(name_cues(text, s, e))
    return {n: NameInfo(frozenset(docs[n]), frozenset(cues[n])) for n in sorted(docs)}

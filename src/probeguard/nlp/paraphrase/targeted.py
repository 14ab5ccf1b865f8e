"""Targeted rewordings: paraphrases aimed at the words retrieval depends on.

A paraphrase tests a retriever only when it changes the words the retriever matches on. The
*anchors* of a question are its words that also occur in the gold evidence (compared by
``probeguard.nlp.stemming.stem``), ranked by their idf over the corpus — the rarer a shared
word, the more a lexical retriever's score rests on it:

    idf(w) = ln(1 + (N − df(w) + 0.5) / (df(w) + 0.5))

(BM25's idf as Lucene computes it; Robertson & Zaragoza 2009, "The Probabilistic Relevance
Framework: BM25 and Beyond"), with ``N`` documents and ``df(w)`` the documents holding stem
``w``. Stopwords, numbers and names (a word that the evidence writes capitalised wherever it
occurs) are never anchors: no synonym keeps the question's meaning.

Two rewordings, each a table substitution (``substitute_with``) over the ``related``,
``synonym`` and ``jargon`` tables merged, cut down to the words it aims at:

- ``targeted`` (away from the evidence): the ``limit`` highest-idf anchors that have an
  alternative none of whose content words occurs in the evidence, each replaced by such an
  alternative — the meaning is kept, a lexical retriever loses its anchors. None when no anchor
  has one (a paraphrase that changes nothing retrieval depends on is no test of retrieval).
- ``evidence_wording`` (toward the evidence): each content word of the question that the
  evidence lacks replaced by an alternative whose content words all occur in the evidence; the
  tables are also read backwards here (an alternative leads back to its key). When the original
  question misses its evidence, this rewording tells a wording miss from a plain one. None when
  no word has such an alternative.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache

import numpy as np

from probeguard.nlp.paraphrase.lexicon import TableEntry, tables
from probeguard.nlp.paraphrase.substitution import base_readings, substitute_with
from probeguard.nlp.stemming import stem
from probeguard.nlp.text import content_words, word_spans

__all__ = [
    "EVIDENCE_WORDING",
    "TARGETED",
    "CorpusIdf",
    "anchor_terms",
    "corpus_idf",
    "evidence_wording",
    "targeted",
]

TARGETED = "targeted"
"""The kind name of the away-from-the-evidence rewording."""
EVIDENCE_WORDING = "evidence_wording"
"""The kind name of the toward-the-evidence rewording."""

_TABLE_ORDER = ("related", "synonym", "jargon")


@dataclass(frozen=True)
class CorpusIdf:
    """Document frequencies of word stems over a corpus, and their idf (module docstring)."""

    n: int
    df: Mapping[str, int]

    def __call__(self, word_stem: str) -> float:
        df = self.df.get(word_stem, 0)
        return math.log(1.0 + (self.n - df + 0.5) / (df + 0.5))


def corpus_idf(texts: Iterable[str]) -> CorpusIdf:
    """``CorpusIdf`` of the stems of the texts' content words (each text one document)."""
    df: Counter[str] = Counter()
    n = 0
    for text in texts:
        n += 1
        df.update(_stems(text))
    return CorpusIdf(n=n, df=dict(df))


def _stems(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in content_words(text) if not w[:1].isdigit())


def _names(evidence: str) -> frozenset[str]:
    """Stems the evidence writes capitalised at every occurrence (names, titles)."""
    capitalised: dict[str, bool] = {}
    for surface, _, _ in word_spans(evidence):
        key = stem(surface.lower())
        capitalised[key] = capitalised.get(key, True) and surface[:1].isupper()
    return frozenset(k for k, cap in capitalised.items() if cap)


def anchor_terms(question: str, evidence: str, idf: Callable[[str], float]) -> list[str]:
    """The question's anchors (lower-cased, each once): its content words whose stem occurs in
    ``evidence``, not numbers, not names, highest idf first (ties in question order)."""
    shared = _stems(evidence) - _names(evidence)
    seen: list[str] = []
    for word in content_words(question):
        if not word[:1].isdigit() and stem(word) in shared and word not in seen:
            seen.append(word)
    return sorted(seen, key=lambda w: -idf(stem(w)))


@cache
def _merged(backwards: bool) -> dict[str, TableEntry]:
    """The three tables as one (alternatives of a key concatenated in ``_TABLE_ORDER``);
    ``backwards`` adds each one-word alternative as a key leading back to its key."""
    parts: dict[str, dict[str, list[str]]] = {}

    def add(key: str, pos: str, alts: Iterable[str]) -> None:
        slot = parts.setdefault(key, {"any": [], "noun": [], "other": []})[pos]
        slot.extend(a for a in alts if a not in slot)

    for name in _TABLE_ORDER:
        for key, entry in tables()[name].items():
            for pos in ("any", "noun", "other"):
                add(key, pos, getattr(entry, pos))
    if backwards:
        for name in _TABLE_ORDER:
            for key, entry in tables()[name].items():
                for alt in (*entry.any, *entry.noun, *entry.other):
                    if " " not in alt and " " not in key:
                        add(alt.rstrip("*").lower(), "any", [key])
    return {k: TableEntry(**{p: tuple(v) for p, v in e.items()}) for k, e in parts.items()}


def _cut(word: str, keep: Callable[[str], bool], backwards: bool) -> dict[str, TableEntry]:
    """The merged table's entries for ``word``'s base readings, alternatives filtered by
    ``keep``; entries left with no alternative are dropped."""
    table = _merged(backwards)
    out: dict[str, TableEntry] = {}
    for base, _ in base_readings(word):
        entry = table.get(base)
        if entry is None:
            continue
        cut = TableEntry(
            any=tuple(filter(keep, entry.any)),
            noun=tuple(filter(keep, entry.noun)),
            other=tuple(filter(keep, entry.other)),
        )
        if cut.any or cut.noun or cut.other:
            out[base] = cut
    return out


def targeted(
    question: str,
    evidence: str,
    idf: Callable[[str], float],
    rng: np.random.Generator,
    limit: int = 3,
) -> str | None:
    """The question with its ``limit`` highest-idf replaceable anchors reworded away from the
    evidence (module docstring); None when none can be."""
    evidence_stems = _stems(evidence)

    def away(alt: str) -> bool:
        alt_stems = _stems(alt.replace("*", ""))
        return bool(alt_stems) and not alt_stems & evidence_stems

    table: dict[str, TableEntry] = {}
    for word in anchor_terms(question, evidence, idf):
        if limit <= 0:
            break
        cut = _cut(word, away, backwards=False)
        if cut:
            table.update(cut)
            limit -= 1
    return substitute_with(question, table, rng) if table else None


def evidence_wording(question: str, evidence: str, rng: np.random.Generator) -> str | None:
    """The question with the words the evidence lacks reworded into the evidence's own words
    (module docstring); None when none can be."""
    evidence_stems = _stems(evidence)

    def toward(alt: str) -> bool:
        alt_stems = _stems(alt.replace("*", ""))
        return bool(alt_stems) and alt_stems <= evidence_stems

    table: dict[str, TableEntry] = {}
    for word in content_words(question):
        if not word[:1].isdigit() and stem(word) not in evidence_stems:
            table.update(_cut(word, toward, backwards=True))
    return substitute_with(question, table, rng) if table else None

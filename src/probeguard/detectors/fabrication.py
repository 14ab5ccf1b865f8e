"""Refusal and fabrication-by-quotation detection, shared by the ``unanswerable`` and
``benign_control`` probes. Rule-based and deterministic (no model).

* ``is_refusal(out)``: the pipeline said it declined (``out.refused``) or the answer reads
  as a refusal (``probeguard.models.prompts.looks_like_refusal``: empty, or a phrase such
  as "I don't know", "the context does not contain ...").

* ``CorpusIndex``: the corpus vocabulary, built once per document set (titles and texts):

  - ``contains(term)``: the term occurs in some document, case-insensitively, on word
    boundaries (``\\bterm\\b``, whitespace inside the term matching any whitespace);
  - ``absent(term)``: ``not contains(term)`` *and* some word of the term has a stem
    (``probeguard.nlp.stemming.stem``) that no corpus word has. So
    "Iceland" is absent from a corpus that never names it, "kayak" is not absent from one
    that mentions "kayaks", and "New Caledonia" is absent as long as "caledonia" is;
  - ``overlap(text)``: share of the text's distinct stemmed content words
    (``probeguard.nlp.text.content_words``) that occur in the corpus, NaN when it has none.

* ``find_quotation(answer, retrieved, index)``: is the answer made of real corpus text? The
  answer is cut at its ``[n]`` citation markers and each part into sentences
  (``probeguard.nlp.text.sentence_spans``); pieces shorter than 3 characters are ignored. A
  piece is *quoted* when, whitespace collapsed and case ignored,

  1. it is a substring of a retrieved chunk or of a corpus document (``verbatim``), or
  2. at least ``min_overlap`` (default 0.8) of its distinct stemmed content words occur in
     one single sentence of a retrieved chunk or of a document a retrieved chunk comes from,
     and it has at least 3 (a near-verbatim paraphrase: an LLM that re-words a neighbouring
     sentence; only the neighbourhood is searched, which is what the generator saw and
     keeps the check cheap on a large corpus).

  The answer is a quotation when it has at least one piece and every piece is quoted; the
  result names the documents quoted (for each piece, the first retrieved chunk, else the
  first corpus document, in corpus order, that holds it).

Attack phrases (``attack_phrases``), also used by the ``benign_control`` probe, live in
``probeguard.nlp.attack_phrases``; ``VERSION`` below covers them too.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from probeguard.core.documents import Document
from probeguard.core.pipeline import PipelineOutput, RetrievedChunk
from probeguard.models.prompts import looks_like_refusal
from probeguard.nlp.stemming import stem
from probeguard.nlp.text import CITATION_MARKER, content_words, sentence_spans, words

__all__ = ["CorpusIndex", "Quotation", "VERSION", "find_quotation", "is_refusal"]

VERSION = 1
"""Bumped whenever a rule here or an attack pattern (``probeguard.nlp.attack_phrases``) changes
(probes record it in their evidence)."""

_MIN_PIECE = 3
_TOKEN = re.compile(r"\w+")
_MIN_OVERLAP_WORDS = 3


def is_refusal(out: PipelineOutput) -> bool:
    """True when the pipeline declined: ``out.refused`` or a refusal-looking answer."""
    return bool(out.refused) or looks_like_refusal(out.answer)


def _stem(word: str) -> str:
    return stem(word)


def _squeeze(text: str) -> str:
    return " ".join(text.split()).lower()


def _stems(text: str) -> frozenset[str]:
    return frozenset(_stem(w) for w in content_words(text))


class CorpusIndex:
    """The corpus as the probes check it (see the module docstring). Built lazily: each
    view (texts, vocabulary, sentences) is computed on first use, once."""

    def __init__(self, documents: Sequence[Document]) -> None:
        self.documents = tuple(documents)
        self._sentences: dict[str, tuple[frozenset[str], ...]] = {}

    @cached_property
    def texts(self) -> tuple[str, ...]:
        """Each document's title and text, whitespace collapsed, lower-cased."""
        return tuple(_squeeze(f"{d.title}\n{d.text}") for d in self.documents)

    @cached_property
    def stems(self) -> frozenset[str]:
        """Stems of every word of every title and text (stopwords included)."""
        return frozenset(_stem(w) for d in self.documents for w in words(f"{d.title}\n{d.text}"))

    @cached_property
    def _by_id(self) -> dict[str, Document]:
        return {d.id: d for d in self.documents}

    def sentences(self, doc_id: str) -> tuple[frozenset[str], ...]:
        """The stemmed content words of each sentence of document ``doc_id`` (empty for an
        unknown id); computed on first need, once per document."""
        cached = self._sentences.get(doc_id)
        if cached is None:
            doc = self._by_id.get(doc_id)
            cached = (
                ()
                if doc is None
                else tuple(_stems(doc.text[s:e]) for s, e in sentence_spans(doc.text))
            )
            self._sentences[doc_id] = cached
        return cached

    @cached_property
    def tokens(self) -> frozenset[str]:
        """Every maximal run of word characters (``\\w+``) of the lower-cased texts: a
        one-word term occurs on word boundaries exactly when it is one of them."""
        return frozenset(t for text in self.texts for t in _TOKEN.findall(text))

    @cached_property
    def joined(self) -> str:
        """The texts joined by NUL (neither a word character nor whitespace, so no match
        spans two documents)."""
        return "\x00".join(self.texts)

    def contains(self, term: str) -> bool:
        """The term occurs in some document (case-insensitive, word boundaries)."""
        parts = term.lower().split()
        if len(parts) == 1 and _TOKEN.fullmatch(parts[0]):
            return parts[0] in self.tokens
        pattern = _term_pattern(term)
        return pattern is not None and pattern.search(self.joined) is not None

    def absent(self, term: str) -> bool:
        """Not ``contains(term)``, and some word of the term has a stem no corpus word has."""
        term_words = words(term)
        if not term_words or self.contains(term):
            return False
        return any(_stem(w) not in self.stems for w in term_words)

    def overlap(self, text: str) -> float:
        """Share of the text's distinct stemmed content words found in the corpus (NaN
        when the text has none)."""
        stems = _stems(text)
        if not stems:
            return math.nan
        return sum(1 for s in stems if s in self.stems) / len(stems)

    def documents_holding(self, piece: str) -> list[str]:
        """Ids of the documents whose text holds ``piece`` verbatim (whitespace collapsed,
        case ignored), in corpus order."""
        needle = _squeeze(piece)
        return [d.id for d, t in zip(self.documents, self.texts) if needle in t]


def _term_pattern(term: str) -> re.Pattern[str] | None:
    parts = term.lower().split()
    if not parts:
        return None
    body = r"\s+".join(re.escape(p) for p in parts)
    return re.compile(rf"(?<!\w){body}(?!\w)")


@dataclass(frozen=True)
class Quotation:
    """Whether an answer is made of real corpus text, and whose."""

    quoted: bool
    """Every piece of the answer is quoted (verbatim or near-verbatim)."""
    verbatim: bool
    """Every piece is a verbatim quote."""
    doc_ids: tuple[str, ...] = ()
    """The documents quoted (first-seen order)."""
    pieces: int = 0
    unquoted: tuple[str, ...] = field(default=())
    """The pieces that quote nothing (at most 3, for the reader)."""


def _pieces(answer: str) -> list[str]:
    out: list[str] = []
    for part in CITATION_MARKER.split(answer):
        out += [part[s:e] for s, e in sentence_spans(part)]
    return [p for p in (" ".join(x.split()) for x in out) if len(p) >= _MIN_PIECE]


def _neighbour_sentences(
    retrieved: Sequence[RetrievedChunk], index: CorpusIndex | None
) -> list[tuple[str, frozenset[str]]]:
    """(document id, stemmed content words) of each sentence of the retrieved chunks, then
    of the whole documents they come from (the answer's neighbourhood)."""
    ranked = sorted(retrieved, key=lambda r: r.rank)
    out = [(r.doc_id, _stems(r.text[s:e])) for r in ranked for s, e in sentence_spans(r.text)]
    if index is not None:
        for doc_id in dict.fromkeys(r.doc_id for r in ranked):
            out += [(doc_id, s) for s in index.sentences(doc_id)]
    return out


def find_quotation(
    answer: str,
    retrieved: Sequence[RetrievedChunk],
    index: CorpusIndex | None,
    *,
    min_overlap: float = 0.8,
) -> Quotation:
    """Is ``answer`` made of text from the retrieved chunks or the corpus (module docstring)?"""
    pieces = _pieces(answer)
    if not pieces:
        return Quotation(quoted=False, verbatim=False)
    chunk_texts = [(r.doc_id, _squeeze(r.text)) for r in sorted(retrieved, key=lambda r: r.rank)]
    near: list[tuple[str, frozenset[str]]] | None = None
    doc_ids: list[str] = []
    unquoted: list[str] = []
    verbatim_all = True
    for piece in pieces:
        needle = _squeeze(piece)
        source = next((d for d, t in chunk_texts if needle in t), None)
        if source is None and index is not None:
            holders = index.documents_holding(piece)
            source = holders[0] if holders else None
        if source is None:
            verbatim_all = False
            stems = _stems(piece)
            if len(stems) >= _MIN_OVERLAP_WORDS:
                if near is None:
                    near = _neighbour_sentences(retrieved, index)
                source = next(
                    (d for d, s in near if len(stems & s) >= min_overlap * len(stems)), None
                )
        if source is None:
            unquoted.append(piece)
        elif source not in doc_ids:
            doc_ids.append(source)
    return Quotation(
        quoted=not unquoted,
        verbatim=verbatim_all and not unquoted,
        doc_ids=tuple(doc_ids),
        pieces=len(pieces),
        unquoted=tuple(unquoted[:3]),
    )

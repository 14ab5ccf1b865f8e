"""Which corpus documents conflict with a case's gold evidence *on the asked fact*: the only
corpus documents the clean-corpus swap may mask (``swaps.conflicting_docs``).

A non-gold corpus document ``d`` conflicts with a gold document ``g`` when both hold:

* **related** — metadata links them (``supersedes``, ``superseded_by``, ``near_duplicate_of``,
  ``duplicate_of``, in either direction), or they share a title (``title_key``: lower-case
  words, digits and bracketed text dropped, so "Plans (2022)" is "Plans") or a ``topic``
  metadata value;
* **disagreeing on the asked fact** — take ``g``'s *answer sentence* (the first sentence that
  contains an expected answer, ``nlp.text.contains_answer``; else the one sharing the most
  stemmed content words with the question, ``nlp.support.question_terms``) and ``d``'s
  *counterpart*: among its sentences that share with the answer sentence at least
  ``MIN_OVERLAP`` of the shorter one's stemmed content words (numbers left out) and at least
  ``MIN_SHARED`` of them (or all, for a shorter answer sentence), the one most similar to the
  answer sentence and the question together (Jaccard index of stemmed content words; the
  earlier sentence on a tie) — so a terse older wording ("a late report is
  fined $100") still answers a long current one, and a sentence that only shares the
  question's words does not stand in for it; they
  disagree when, for a kind of value both sentences state, the values differ: numbers by
  ``nlp.mentions.number_mentions(every_kind=True)`` compared within ``same_kind``, dates by
  ``date_mentions`` (year, month, day), names by the capitalised words after the first
  word. A version *linked* through metadata also disagrees when its counterpart words the
  answer sentence differently (other stemmed content words: "at any time" vs "at the next
  renewal date"); a merely same-titled one needs a differing value. No answer sentence, or
  no counterpart, is no conflict.

An archived document that is unrelated to the gold evidence, or related but saying the same
thing about the asked fact, is therefore never masked: its status alone does not implicate it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from probeguard.core.documents import Document, version_links
from probeguard.nlp.mentions import date_mentions, number_mentions, same_kind
from probeguard.nlp.stemming import stem
from probeguard.nlp.support import question_terms
from probeguard.nlp.text import contains_answer, content_words, split_sentences, words

__all__ = [
    "MIN_OVERLAP",
    "MIN_SHARED",
    "answer_sentence",
    "disagree",
    "related",
    "title_key",
]

MIN_OVERLAP = 0.4
"""Least share of the answer sentence's stemmed content words (numbers left out) that a
sentence of a related document must share to be its counterpart."""

MIN_SHARED = 2
"""Least number of stemmed content words a counterpart shares with the answer sentence."""
_BRACKETED = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_NAME = re.compile(r"(?<=\s)[A-Z][\w'’-]*")


def _linked(a: Document, b: Document) -> bool:
    return b.id in version_links(a.metadata) or a.id in version_links(b.metadata)


def title_key(doc: Document) -> str:
    """The title as compared: bracketed text and digits dropped, lower-case words."""
    text = _BRACKETED.sub(" ", doc.title or "")
    return " ".join(w for w in words(text) if not any(c.isdigit() for c in w))


def related(a: Document, b: Document) -> bool:
    """Linked through ``core.documents.VERSION_LINKS`` (either direction), or the same ``title_key`` or ``topic``."""
    if _linked(a, b):
        return True
    key = title_key(a)
    if key and key == title_key(b):
        return True
    topic = a.metadata.get("topic")
    return topic is not None and topic == b.metadata.get("topic")


def _stems(text: str, *, numbers: bool = True) -> frozenset[str]:
    return frozenset(
        stem(w) for w in content_words(text) if numbers or not any(c.isdigit() for c in w)
    )


def answer_sentence(text: str, question: str, answers: Sequence[str]) -> str | None:
    """The sentence of ``text`` that answers (module docstring); None when none does."""
    sentences = split_sentences(text)
    for sentence in sentences:
        if any(contains_answer(sentence, a) for a in answers if a):
            return sentence
    terms = question_terms(question)
    scored = [(len(terms & _stems(s)), -i, s) for i, s in enumerate(sentences)]
    best = max(scored, default=None)
    return best[2] if best is not None and best[0] > 0 else None


def _overlaps(own: frozenset[str], theirs: frozenset[str]) -> bool:
    """Enough shared stems for a counterpart (module docstring)."""
    shared = len(own & theirs)
    return shared >= min(MIN_SHARED, len(own)) and shared >= MIN_OVERLAP * min(
        len(own), len(theirs)
    )


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b| (0 for two empty sets)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def _counterpart(text: str, sentence: str, question: str) -> str | None:
    own = _stems(sentence, numbers=False)
    if not own:
        return None
    wanted = own | question_terms(question)
    scored = [
        (_jaccard(wanted, _stems(s)), -i, s)
        for i, s in enumerate(split_sentences(text))
        if _overlaps(own, _stems(s, numbers=False))
    ]
    best = max(scored, default=None)
    return best[2] if best is not None else None


def _numbers_differ(a: str, b: str) -> bool:
    ours, theirs = number_mentions(a, every_kind=True), number_mentions(b, every_kind=True)
    for x in ours:
        comparable = [y for y in theirs if same_kind(x, y)]
        if comparable and all(abs(x.value - y.value) > 1e-9 for y in comparable):
            return True
    return False


def _dates_differ(a: str, b: str) -> bool:
    ours = {(d.year, d.month, d.day) for d in date_mentions(a)}
    theirs = {(d.year, d.month, d.day) for d in date_mentions(b)}
    return bool(ours and theirs and ours != theirs)


def _names_differ(a: str, b: str) -> bool:
    ours, theirs = set(_NAME.findall(a)), set(_NAME.findall(b))
    return bool(ours and theirs and ours != theirs)


def disagree(
    gold_text: str,
    other_text: str,
    question: str,
    answers: Sequence[str],
    *,
    linked: bool = False,
) -> bool:
    """``other_text`` states the asked fact differently from ``gold_text`` (module
    docstring); for a ``linked`` version, other wording of the answer sentence counts too."""
    sentence = answer_sentence(gold_text, question, answers)
    if sentence is None:
        return False
    other = _counterpart(other_text, sentence, question)
    if other is None:
        return False
    return (
        _numbers_differ(sentence, other)
        or _numbers_differ(other, sentence)
        or _dates_differ(sentence, other)
        or _names_differ(sentence, other)
        or (linked and _stems(sentence) != _stems(other))
    )


def conflicting_with_gold(
    gold: Sequence[Document],
    candidates: Iterable[Document],
    question: str,
    answers: Sequence[str],
) -> set[str]:
    """Ids of the ``candidates`` (non-gold documents) related to a gold document that
    disagree with it on the asked fact (module docstring)."""
    gold_ids = {g.id for g in gold}
    return {
        d.id
        for d in candidates
        if d.id not in gold_ids
        and any(
            related(g, d) and disagree(g.text, d.text, question, answers, linked=_linked(g, d))
            for g in gold
        )
    }


def linked_to(gold: Sequence[Document], documents: Mapping[str, Document]) -> set[str]:
    """Ids of the corpus documents linked to a gold document, in either direction."""
    ids = {g.id for g in gold}
    out = {i for g in gold for i in version_links(g.metadata) if i in documents}
    out |= {i for i, d in documents.items() if version_links(d.metadata) & ids}
    return out - ids

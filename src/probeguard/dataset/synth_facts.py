"""Facts for the synthesizer: answer spans read from a corpus's sentences, and the
wh-question each one answers.

A *fact* is one number or date mention inside one sentence of one document, with its exact
character span in the document (``document.text[start:end] == fact.answer`` always holds).
Rules (``probeguard.nlp.mentions`` reads the mentions, ``probeguard.nlp.text`` the sentences):

* a percent ("10%") is asked with "what percentage"; a currency amount ("$6.95") with "how
  much"; a plain number followed by a counted word ("30 days", "16 weeks") with "how many
  <word>", the span taking the word (and a plural word after a non-plural one: "5 business
  days"; no fact when the next word is a stopword: "3 to 7"); a date ("1 March 2024", "in 1889") with "when"  (the
  cue word before it, "in"/"on"/"since", dropped; a final "." of "31 May." left out);
* a name ("Tobias Renn", "Lake Tessaly"; ``synth_names.name_spans``: capitalised words with
  a token the corpus writes capitalised inside sentences and never in lower case) with
  ``synth_names.name_wh`` ("whom", "which lake", "what"; an article before it dropped); not
  when it overlaps a number or date, is a common name of the corpus, occurs in the title,
  or occurs twice in the sentence (the question would hold its own answer);
* a plain number without a counted word, and any mention inside a sentence of more than
  ``MAX_WORDS`` words or fewer than ``MIN_WORDS``, gives no fact;
* the question is the sentence with the answer replaced by the wh-phrase, led by the
  document's title: "According to Refund Policy, customers may return most items within how
  many days of delivery ...?" (an echo question: readable, and its answer is exactly the span).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from probeguard.core.documents import Document
from probeguard.dataset.synth_names import NameVocabulary, name_spans, name_vocabulary, name_wh
from probeguard.nlp.mentions import date_mentions, number_mentions
from probeguard.nlp.text import STOPWORDS, content_words, sentence_spans, words

__all__ = [
    "MAX_WORDS",
    "MIN_WORDS",
    "Fact",
    "corpus_vocabulary",
    "facts_of",
    "key_terms",
    "lower_first",
    "masked",
    "wh_clause",
]

MAX_WORDS = 40
"""Longest sentence (in words) a fact is read from."""
MIN_WORDS = 5
"""Shortest sentence (in words) a fact is read from."""

_COUNTED = re.compile(r"\s+([a-z][a-z]*(?:-[a-z]+)*)\b")
_UNIT_WORDS = 2
_IRREGULAR_PLURALS = frozenset({"people", "children", "men", "women", "staff", "feet", "teeth"})
_ARTICLE = re.compile(r"\bthe\s+$", re.IGNORECASE)
_DATE_CUE = re.compile(r"(?:\b(?:in|on|since|from|by|until)\s+)$", re.IGNORECASE)


@dataclass(frozen=True)
class Fact:
    """One answer span: ``doc.text[start:end] == answer``, inside the sentence
    ``doc.text[sent_start:sent_end]`` (the ``index``-th sentence of the document)."""

    doc_id: str
    title: str
    sentence: str
    sent_start: int
    sent_end: int
    start: int
    end: int
    answer: str
    kind: str
    """``percent``, ``currency``, ``count``, ``date`` or ``name``."""
    unit: str
    """The counted word of a ``count`` ("days"); else the kind."""
    value: float
    """The number (a date's year; NaN for a name)."""
    wh: str
    """The wh-phrase that replaces the answer ("how many days")."""
    index: int

    @property
    def key(self) -> tuple[str, int, int]:
        """The span's identity: (document id, start, end)."""
        return (self.doc_id, self.start, self.end)


def corpus_vocabulary(documents: Sequence[Document]) -> frozenset[str]:
    """Every lower-cased word of the corpus's titles and texts."""
    vocab: set[str] = set()
    for doc in documents:
        vocab.update(w.lower() for w in words(doc.title))
        vocab.update(w.lower() for w in words(doc.text))
    return frozenset(vocab)


def _title(doc: Document) -> str:
    return doc.title.strip() or doc.id


def _plural(word: str) -> bool:
    return word in _IRREGULAR_PLURALS or (word.endswith("s") and not word.endswith(("ss", "us")))


def _counted(sentence: str, end: int) -> int | None:
    """Where the counted phrase after a number ends: up to ``_UNIT_WORDS`` lower-case words
    ending at the first plural noun ("30 days", "5 business days"); None when a stopword
    or a non-lower-case word comes first, or no plural does ("41,000 had been made")."""
    pos = end
    for _ in range(_UNIT_WORDS):
        word = _COUNTED.match(sentence, pos)
        if word is None or word.group(1) in STOPWORDS:
            return None
        pos = word.end(1)
        if _plural(word.group(1)):
            return pos
    return None


_Mention = tuple[int, int, str, str, float, str]


def _names(
    sentence: str, title: str, vocab: NameVocabulary, taken: list[_Mention]
) -> list[_Mention]:
    """The name mentions of ``sentence`` that overlap no number or date in ``taken``, are
    not common, not in ``title`` and occur once in the sentence."""
    out = []
    for a, b in name_spans(sentence, vocab):
        name = sentence[a:b]
        if any(a < e and s < b for s, e, *_ in taken) or name in vocab.common:
            continue
        if name.lower() not in title.lower() and sentence.count(name) == 1:
            wh = name_wh(name, sentence[:a], vocab)
            out.append((a, b, "name", "name", float("nan"), wh))
    return out


def _mentions(sentence: str, title: str, vocab: NameVocabulary) -> list[_Mention]:
    """``(start, end, kind, unit, value, wh)`` of each usable mention, in the sentence."""
    found: list[_Mention] = []
    for d in date_mentions(sentence):
        end = d.end - 1 if sentence[d.start : d.end].endswith(".") else d.end
        found.append((d.start, end, "date", "date", float(d.year or 0), "when"))
    for m in number_mentions(sentence):
        if m.kind == "percent":
            found.append((m.start, m.end, "percent", "percent", m.value, "what percentage"))
        elif m.kind == "currency":
            found.append((m.start, m.end, "currency", "currency", m.value, "how much"))
        elif m.kind == "plain":
            unit_end = _counted(sentence, m.end)
            if unit_end is not None:
                unit = sentence[m.end : unit_end].strip()
                found.append((m.start, unit_end, "count", unit, m.value, f"how many {unit}"))
    found += _names(sentence, title, vocab, found)
    found.sort(key=lambda m: (m[0], m[1], m[2], m[3]))
    kept: list[_Mention] = []
    for item in found:
        if not kept or item[0] >= kept[-1][1]:
            kept.append(item)
    return kept


def facts_of(doc: Document, names: NameVocabulary | None = None) -> list[Fact]:
    """The facts of one document, in text order (rules in the module docstring); ``names``
    is the corpus's name vocabulary (``synth_names.name_vocabulary``; default: the
    document's own)."""
    out: list[Fact] = []
    title = _title(doc)
    vocab = name_vocabulary([doc]) if names is None else names
    for index, (s, e) in enumerate(sentence_spans(doc.text)):
        sentence = doc.text[s:e]
        if "\n" in sentence or not MIN_WORDS <= len(words(sentence)) <= MAX_WORDS:
            continue
        for a, b, kind, unit, value, wh in _mentions(sentence, title, vocab):
            out.append(
                Fact(
                    doc_id=doc.id,
                    title=title,
                    sentence=sentence,
                    sent_start=s,
                    sent_end=e,
                    start=s + a,
                    end=s + b,
                    answer=sentence[a:b],
                    kind=kind,
                    unit=unit,
                    value=value,
                    wh=wh,
                    index=index,
                )
            )
    return out


def lower_first(text: str) -> str:
    """``text`` with its first letter lower-cased when its first word is a stopword ("This",
    "It"): any other capital may start a name."""
    if text.split(" ", 1)[0].lower() in STOPWORDS:
        return text[0].lower() + text[1:]
    return text


def masked(fact: Fact, replacement: str) -> str:
    """The fact's sentence with the answer replaced by ``replacement``, without its final
    punctuation."""
    a, b = fact.start - fact.sent_start, fact.end - fact.sent_start
    text = fact.sentence[:a] + replacement + fact.sentence[b:]
    return text.rstrip().rstrip(".!?;:").rstrip()


def wh_clause(fact: Fact) -> str:
    """The sentence with the answer replaced by the wh-phrase (no title, no "?"); a date's
    cue word before a "when" is dropped ("took effect on when" → "took effect when"), and a
    name's article ("across the which dam" → "across which dam")."""
    a = fact.start - fact.sent_start
    head = fact.sentence[:a]
    wh = fact.wh
    if fact.kind == "date":
        head = _DATE_CUE.sub("", head)
    elif fact.kind == "name":
        head = _ARTICLE.sub("", head)
    b = fact.end - fact.sent_start
    text = head + wh + fact.sentence[b:]
    return lower_first(text.rstrip().rstrip(".!?;:").rstrip())


def key_terms(text: str) -> frozenset[str]:
    """Lower-cased content words: what near-duplicate checks compare."""
    return frozenset(w.lower() for w in content_words(text))

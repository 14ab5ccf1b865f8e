"""How well each sentence of some contexts supports a question: the extractive generator's
scorer, also read by the offline claim judge.

Support score of a sentence ``s`` for a question ``q`` (coverage of the question's content
words, weighted by rarity)::

    support(s) = (sum(idf(w) for w in Q & S(s)) + 0.75 * sum(idf(w) for w in Q & P(s) - S(s)))
                 / sum(idf(w) for w in Q)  +  bonus(s)
    idf(w)     = ln(1 + (N - df(w) + 0.5) / (df(w) + 0.5))   (BM25 idf, > 0; df floored at 1)

``Q`` and ``S(s)`` are the sets of normalised content words (``probeguard.nlp.text.content_words``
minus question fillers such as "many"/"much", then ``probeguard.nlp.stemming.stem``) of the
question and the sentence (``question_terms``, ``analysed_sentences``).
``P(s)`` is empty unless ``s`` opens with a pronoun ("It was completed in 1889."): then it is
the word set of the sentence before it in the same context (itself inherited in turn), counted
at weight 0.75 (a one-step anaphora heuristic, so that the sentence holding the fact is not
beaten by the one naming the subject, while the subject's own sentence still wins a tie on
the subject alone). ``N`` is the number of sentences across the given contexts and ``df(w)``
how many of them contain ``w`` themselves (``S``, not ``P``), floored at 1:
a question word that no sentence contains weighs as much as the rarest word one does, and
lowers every sentence's coverage (the context does not say it). ``bonus(s)`` is
``number_bonus`` when the question asks for a quantity or a time ("how many/much/long/old",
"when", "what year", ...) and the sentence holds a number, else 0. Scores lie in
``[0, 1 + number_bonus]``.

A change to these scores changes the extractive generator's answers: bump its cache version
(``probeguard.models.generators.extractive``) with it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import lru_cache

from probeguard.core.pipeline import Context
from probeguard.nlp.stemming import stem
from probeguard.nlp.text import content_words, sentence_spans, words

__all__ = ["analysed_sentences", "question_terms", "support_scores"]

_QUESTION_FILLERS = frozenset({"many", "much", "often", "tell", "please", "exactly"})
_QUANTITY_QUESTION = re.compile(
    r"\b(how (many|much|long|old|tall|far|big|large|high|heavy|fast|often)|when|"
    r"(what|which) (year|date|day|month|time|percentage|number|amount|price))\b",
    re.IGNORECASE,
)
_HAS_DIGIT = re.compile(r"\d")
_PRONOUNS = frozenset(
    {
        "it",
        "its",
        "he",
        "his",
        "she",
        "her",
        "they",
        "their",
        "this",
        "these",
        "those",
        "such",
        "both",
    }
)


_ANAPHORA_WEIGHT = 0.75

_Sentence = tuple[str, frozenset[str], frozenset[str], bool]


@lru_cache(maxsize=8192)
def analysed_sentences(text: str) -> tuple[_Sentence, ...]:
    """(verbatim sentence, own stemmed content words S, inherited words P - S, holds a
    number) per sentence of ``text``."""
    out: list[_Sentence] = []
    for start, end in sentence_spans(text):
        sentence = text[start:end]
        own = frozenset(stem(w) for w in content_words(sentence))
        inherited: frozenset[str] = frozenset()
        first = words(sentence[:40])
        if out and first and first[0] in _PRONOUNS:
            inherited = (out[-1][1] | out[-1][2]) - own
        out.append((sentence, own, inherited, bool(_HAS_DIGIT.search(sentence))))
    return tuple(out)


def question_terms(question: str) -> frozenset[str]:
    """``Q``: the question's stemmed content words, question fillers ("many", "much") left out."""
    return frozenset(stem(w) for w in content_words(question) if w not in _QUESTION_FILLERS)


def support_scores(
    question: str, contexts: Sequence[Context], *, number_bonus: float = 0.1
) -> list[tuple[float, int, int, str]]:
    """``(support, context index, sentence index, sentence)`` for every sentence of every
    context, in context then sentence order (formula in the module docstring). Empty when
    the question has no content words (support is undefined, not zero)."""
    terms = question_terms(question)
    per_context = [analysed_sentences(c.text) for c in contexts]
    if not terms:
        return []
    n_sentences = sum(len(s) for s in per_context)
    df = {t: 0 for t in terms}
    for sentences in per_context:
        for _, own, _, _ in sentences:
            for t in terms & own:
                df[t] += 1
    idf = {
        t: math.log(1.0 + (n_sentences - max(d, 1) + 0.5) / (max(d, 1) + 0.5))
        for t, d in df.items()
    }
    # math.fsum is exactly rounded, so the sums do not depend on set iteration order (which
    # changes between processes with string hashing): the same inputs give the same scores.
    total = math.fsum(idf.values())
    wants_number = bool(_QUANTITY_QUESTION.search(question))
    out = []
    for ci, sentences in enumerate(per_context):
        for si, (sentence, own, inherited, has_number) in enumerate(sentences):
            score = (
                math.fsum(idf[t] for t in terms & own)
                + _ANAPHORA_WEIGHT * math.fsum(idf[t] for t in terms & inherited)
            ) / total
            if wants_number and has_number:
                score += number_bonus
            out.append((score, ci, si, sentence))
    return out

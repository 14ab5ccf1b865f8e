"""An extractive generator: answers by quoting the context sentences that best support the
question, each followed by its ``[n]`` citation marker.

It needs no model and is fully deterministic, which makes it the offline reference generator.
It cannot follow instructions (the prompt template is recorded but otherwise unused), yet it
*can* quote an injected sentence that matches the question: that is how poisoned context
reaches its answers.

Support score of a sentence ``s`` for a question ``q`` (coverage of the question's content
words, weighted by rarity)::

    support(s) = (sum(idf(w) for w in Q & S(s)) + 0.75 * sum(idf(w) for w in Q & P(s) - S(s)))
                 / sum(idf(w) for w in Q)  +  bonus(s)
    idf(w)     = ln(1 + (N - df(w) + 0.5) / (df(w) + 0.5))   (BM25 idf, > 0; df floored at 1)

``Q`` and ``S(s)`` are the sets of normalised content words (``probeguard.nlp.text.content_words``
minus question fillers such as "many"/"much", then ``stem``) of the question and the sentence.
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

The answer quotes (verbatim) up to ``max_sentences`` sentences scoring at least
``min_support``, best first; ties go to the earlier context, then the earlier sentence; a
sentence already quoted from another context is skipped. When no
sentence reaches ``min_support`` the generator refuses with ``REFUSAL_TEXT``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from probeguard.core.pipeline import Context, Usage
from probeguard.models.generators.base import Generation, Generator
from probeguard.models.prompts import REFUSAL_TEXT, PromptTemplate
from probeguard.nlp.text import content_words, sentence_spans, words

__all__ = ["ExtractiveGenerator", "stem", "support_scores"]

_VERSION = 1
"""Bumped whenever the scoring changes, so cached answers of an older scorer do not apply."""

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


def stem(word: str) -> str:
    """Light suffix normalisation so that plural and inflected variants meet.

    Harman's S-stemmer (Harman 1991, "How effective is suffixing?", JASIS 42(1)) for plurals
    ("-ies" → "-y", "-es"/"-s" dropped, but not "-ss"/"-us"/"-is"), then "-ing"/"-ed" dropped
    from longer words, then a final "-e" dropped, so "release", "released", "releases" and
    "releasing" all become "releas". A possessive "'s" is removed first. Numbers are kept.
    """
    w = word.lower()
    if w.endswith(("'s", "’s")):
        w = w[:-2]
    if not w or w[0].isdigit():
        return w
    if len(w) > 4 and w.endswith("ies") and not w.endswith(("aies", "eies")):
        w = w[:-3] + "y"
    elif len(w) > 3 and w.endswith("es") and not w.endswith(("aes", "ees", "oes")):
        w = w[:-1]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 4 and w.endswith("ed"):
        w = w[:-2]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


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
    total = sum(idf.values())
    wants_number = bool(_QUANTITY_QUESTION.search(question))
    out = []
    for ci, sentences in enumerate(per_context):
        for si, (sentence, own, inherited, has_number) in enumerate(sentences):
            score = (
                sum(idf[t] for t in terms & own)
                + _ANAPHORA_WEIGHT * sum(idf[t] for t in terms & inherited)
            ) / total
            if wants_number and has_number:
                score += number_bonus
            out.append((score, ci, si, sentence))
    return out


class ExtractiveGenerator(Generator):
    """Quotes the best-supported context sentences with ``[n]`` citations, or refuses.

    ``max_sentences``: most sentences quoted; ``min_support``: least support a sentence needs
    to be quoted (see the module docstring); ``number_bonus``: added to sentences holding a
    number when the question asks how many/much/long, when, what year, ...
    """

    name = "extractive"

    def __init__(
        self, max_sentences: int = 2, min_support: float = 0.35, number_bonus: float = 0.1
    ) -> None:
        if max_sentences < 1:
            raise ValueError(f"max_sentences must be >= 1, got {max_sentences}")
        if number_bonus < 0.0:
            raise ValueError(f"number_bonus must be >= 0, got {number_bonus}")
        if not 0.0 <= min_support <= 1.0 + number_bonus:
            raise ValueError(f"min_support must lie in [0, 1 + number_bonus], got {min_support}")
        self.max_sentences = int(max_sentences)
        self.min_support = float(min_support)
        self.number_bonus = float(number_bonus)

    def __repr__(self) -> str:
        return (
            f"ExtractiveGenerator(max_sentences={self.max_sentences}, "
            f"min_support={self.min_support}, number_bonus={self.number_bonus})"
        )

    def generate(
        self, question: str, contexts: Sequence[Context], prompt: PromptTemplate
    ) -> Generation:
        scored = support_scores(question, contexts, number_bonus=self.number_bonus)
        scored.sort(key=lambda item: (-item[0], item[1], item[2]))
        best = scored[0][0] if scored else None
        parts: list[str] = []
        cited: list[str] = []
        supports: list[float] = []
        seen: set[str] = set()
        for score, ci, _si, sentence in scored:
            if score < self.min_support or len(parts) >= self.max_sentences:
                break
            key = " ".join(sentence.split())
            if key in seen:  # the same sentence in two contexts adds nothing
                continue
            seen.add(key)
            parts.append(f"{sentence} [{ci + 1}]")
            supports.append(score)
            chunk_id = contexts[ci].chunk_id
            if chunk_id not in cited:
                cited.append(chunk_id)
        metadata: dict[str, Any] = {
            "prompt": prompt.name,
            "generator": self.name,
            "best_support": best,
            "supports": supports,
        }
        if not parts:
            return Generation(text=REFUSAL_TEXT, refused=True, usage=Usage(), metadata=metadata)
        return Generation(
            text=" ".join(parts),
            cited_chunk_ids=tuple(cited),
            refused=False,
            usage=Usage(),
            metadata=metadata,
        )

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": _VERSION,
            "max_sentences": self.max_sentences,
            "min_support": self.min_support,
            "number_bonus": self.number_bonus,
        }

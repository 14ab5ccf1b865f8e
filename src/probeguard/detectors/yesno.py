"""The yes/no judge prompt for small local models (``LlmJudge(style="yesno")``).

A 135M model cannot keep to a JSON schema, but it can start a reply with "yes" or "no". So:
one claim and one evidence text per call, the question ``models.prompts.YESNO_QUESTION``
("Is the claim supported by the evidence? Answer yes or no.") and a reply of 1-3 tokens.

**Score** (the claim's graded support, ``Verdict.support``):

* when the runtime exposes next-token probabilities (llama.cpp through
  ``LlamaCppGenerator.answer_probabilities``): ``s = P(yes) / (P(yes) + P(no))``, each the
  probability mass of the word's one-token spellings as the reply's first token
  (``models.generators.llama_cpp_logits``); NaN when both are 0;
* otherwise (an OpenAI-compatible endpoint: the client asks for no logprobs) the first word
  of the reply, lower-cased, stripped of punctuation and Markdown: ``yes`` -> 1.0, ``no`` ->
  0.0, anything else -> NaN.

NaN is *unscored* (the reason quotes the reply), never 0 or 1. The label is ``supported``
when ``s >= 0.5``, else ``unsupported`` (a yes/no answer cannot say "contradicted"); the
verdict's ``score`` (confidence in its label) is ``max(s, 1 - s)``.

**Evidence budget** (``fit_evidence``; the cost of a call grows with its prompt): evidence of at
most ``max_words`` whitespace-separated words is kept as it is. Longer evidence is cut to its
sentences (``nlp.text.split_sentences``) ranked by lexical overlap with the claim — the number
of distinct content words (``nlp.text.content_words``) they share with it, ties broken by
position — and taken greedily in that order, each sentence that still fits in ``max_words``
words; the kept ones are shown in document order. When no sentence fits, the top-ranked one
is cut to its first ``max_words`` words. The generator's own context fit (llama.cpp: prompt +
answer within ``n_ctx``) still applies after this.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from probeguard.core.errors import PipelineCallError
from probeguard.core.pipeline import Context
from probeguard.detectors.judges import NAN, Label, Relevance, Verdict
from probeguard.models.generators.base import Generation
from probeguard.models.generators.llama_cpp_logits import AnswerProbabilities
from probeguard.models.prompts import PromptTemplate
from probeguard.nlp.text import content_words, split_sentences

__all__ = [
    "ANSWERS",
    "YESNO_MAX_TOKENS",
    "AnswerScorer",
    "ChatClient",
    "YesNo",
    "ask_yes_no",
    "fit_evidence",
    "parse_yes_no",
    "yes_share",
]

ANSWERS = ("yes", "no")
YESNO_MAX_TOKENS = 3
"""The most tokens a yes/no reply may take."""
_FIRST_WORD = re.compile(r"[A-Za-z]+")
_QUOTE = 80
Method = Literal["logprobs", "first_word"]


@runtime_checkable
class AnswerScorer(Protocol):
    """A runtime that scores answer words by next-token probability."""

    async def aanswer_probabilities(
        self,
        question: str,
        contexts: Sequence[Context],
        prompt: PromptTemplate,
        answers: Sequence[str],
    ) -> AnswerProbabilities: ...


class ChatClient(Protocol):
    """What the judge calls to generate (``OpenAICompatibleGenerator`` and its stand-ins)."""

    async def agenerate(
        self, question: str, contexts: Sequence[Context], prompt: PromptTemplate
    ) -> Generation: ...


def parse_yes_no(text: str) -> float:
    """The first word of ``text`` (letters only, lower-cased; Markdown and punctuation before
    it skipped): ``yes`` -> 1.0, ``no`` -> 0.0, else NaN (also for an empty reply)."""
    match = _FIRST_WORD.search(text)
    word = match.group(0).lower() if match else ""
    return {"yes": 1.0, "no": 0.0}.get(word, NAN)


def yes_share(p_yes: float, p_no: float) -> float:
    """``p_yes / (p_yes + p_no)``; NaN when the sum is 0 (or either is NaN)."""
    total = p_yes + p_no
    return p_yes / total if total > 0 else NAN


def fit_evidence(claim: str, text: str, max_words: int) -> str:
    """``text`` within ``max_words`` words by the rule of the module doc."""
    if len(text.split()) <= max_words:
        return text
    sentences = split_sentences(text) or [text]
    wanted = set(content_words(claim))
    ranked = sorted(
        range(len(sentences)),
        key=lambda i: (-len(wanted & set(content_words(sentences[i]))), i),
    )
    kept, used = [], 0
    for i in ranked:
        size = len(sentences[i].split())
        if used + size <= max_words:
            kept.append(i)
            used += size
    if not kept:
        return " ".join(sentences[ranked[0]].split()[:max_words])
    return " ".join(" ".join(sentences[i].split()) for i in sorted(kept))


@dataclass(frozen=True)
class YesNo:
    """One yes/no call: the score ``s`` of the module doc (NaN: unscored), how it was read,
    and what the model said (or why nothing)."""

    score: float
    method: Method
    reply: str

    @property
    def reason(self) -> str:
        if math.isnan(self.score):
            return f"no yes/no answer ({self.method}): {self.reply[:_QUOTE]!r}"
        if self.method == "logprobs":
            return f"P(yes)/(P(yes)+P(no)) = {self.score:.3f}; first token {self.reply!r}"
        return f"answered {self.reply[:_QUOTE]!r} (first word; no token probabilities)"

    def verdict(self, chunk_id: str) -> Verdict:
        """The cell of the module doc."""
        if math.isnan(self.score):
            return Verdict("unscored", NAN, chunk_id, reason=self.reason)
        label: Label = "supported" if self.score >= 0.5 else "unsupported"
        confidence = max(self.score, 1.0 - self.score)
        return Verdict(label, confidence, chunk_id, reason=self.reason, support=self.score)

    def relevance(self) -> Relevance:
        """Relevant when ``s >= 0.5``; None when unscored."""
        if math.isnan(self.score):
            return Relevance(None, NAN, self.reason)
        return Relevance(self.score >= 0.5, self.score, self.reason)


async def ask_yes_no(
    client: ChatClient | AnswerScorer,
    question: str,
    context: Context,
    prompt: PromptTemplate,
    max_words: int,
) -> YesNo:
    """One call: ``context`` fitted to ``max_words`` for ``question``, scored by
    probabilities when ``client`` is an ``AnswerScorer``, else by the reply's first word.
    A failed call is unscored with the error."""
    fitted = Context(context.chunk_id, fit_evidence(question, context.text, max_words))
    method: Method = "logprobs" if isinstance(client, AnswerScorer) else "first_word"
    try:
        if isinstance(client, AnswerScorer):
            scored = await client.aanswer_probabilities(question, (fitted,), prompt, ANSWERS)
            p = scored.probabilities
            return YesNo(yes_share(p.get("yes", 0.0), p.get("no", 0.0)), method, scored.top)
        generation = await client.agenerate(question, (fitted,), prompt)
    except PipelineCallError as exc:
        return YesNo(NAN, method, f"judge call failed: {exc}")
    return YesNo(parse_yes_no(generation.text), method, generation.text.strip())

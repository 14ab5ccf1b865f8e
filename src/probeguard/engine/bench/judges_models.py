"""The judges ``probeguard bench judges`` measures, how each scores a record, and why one is
skipped.

A judge's **score** for a record is its graded support of the claim's factual claims by the
contexts — ``metrics.graded.support_score`` (the share of supported claims for a judge that
grades nothing, a ranking score for the offline judge) over ``judges.judge_claims`` of
``claims.factual(claims.decompose(claim))``, with the question when the record has one, the
same path ``probeguard eval`` takes. NaN (unscored) when nothing could be judged. The judge's
own decision ("as judged") is faithfulness = 1: every claim supported.

Judges (``--judges``):

- ``offline``: ``OfflineJudge`` from ``judge.offline`` (no model).
- ``llm``: ``LlmJudge`` over any OpenAI-compatible endpoint from ``judge.llm``
  (``PROBEGUARD_JUDGE__LLM__BASE_URL``/``__MODEL``/``__API_KEY_ENV``); skipped when neither a
  base URL other than OpenAI's default nor the key variable is set.
- ``nli``: ``NliJudge`` from ``judge.nli``; skipped (with the error) when it cannot judge a
  one-pair probe (no ``sentence-transformers``, or no hub to load the model from).
- ``consensus``: ``judge.consensus`` when configured, else a majority of the available
  judges among offline, llm and nli; skipped when fewer than two are available.
- ``smollm2``: the LLM judge's yes/no style (``LlmJudge(style="yesno")``,
  ``detectors.yesno``) answered by SmolLM2-135M-Instruct through llama.cpp instead of HTTP:
  one call per factual claim over the record's contexts joined into one passage, cut to
  ``SMOLLM2_EVIDENCE_WORDS`` words (the sentences sharing most words with the claim), scored
  P(yes)/(P(yes)+P(no)) from the next-token probabilities (n_ctx 2048; one decoding thread).
  ``SmolJudge(generator, style="json")`` keeps the JSON prompt (pair mode, one format retry).
  Skipped without cyllama or the weights.

Baseline ``token_overlap`` = |content words of the claim found among the contexts' content
words| / |content words of the claim| (``nlp.text.content_words``; NaN when the claim has none).
"""

from __future__ import annotations

import asyncio
import importlib.util
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from probeguard.core.errors import ProbeGuardError
from probeguard.core.pipeline import Context
from probeguard.detectors.claims import decompose, factual
from probeguard.detectors.config import JudgeConfig, LlmJudgeConfig
from probeguard.detectors.grading import word_overlap
from probeguard.detectors.judges import Consensus, Judge, judge_claims
from probeguard.detectors.llm_judge import LlmJudge
from probeguard.detectors.nli_judge import NliJudge
from probeguard.detectors.offline_judge import OfflineJudge
from probeguard.detectors.yesno import YESNO_MAX_TOKENS
from probeguard.engine.bench.judges_data import LabelledClaim
from probeguard.metrics.graded import support_score
from probeguard.metrics.judged import faithfulness
from probeguard.models.generators.base import Generation, Generator
from probeguard.models.generators.llama_cpp import LlamaCppGenerator
from probeguard.models.generators.llama_cpp_logits import AnswerProbabilities
from probeguard.models.generators.openai_compat import OpenAICompatibleGenerator
from probeguard.models.prompts import PromptTemplate

__all__ = [
    "BASELINE",
    "JUDGE_NAMES",
    "JudgeSpec",
    "SmolJudge",
    "build_specs",
    "Scored",
    "judged",
    "judged_score",
    "token_overlap",
]

JUDGE_NAMES = ("offline", "smollm2", "llm", "consensus", "nli")
BASELINE = "token_overlap"
SMOLLM2_SETTINGS: dict[str, Any] = {"max_tokens": YESNO_MAX_TOKENS, "n_ctx": 2048, "threads": 1}
SMOLLM2_EVIDENCE_WORDS = 128
"""SmolLM2's evidence budget per call: its prompt processing, not decoding, sets the cost."""
NAN = math.nan
_DEFAULT_LLM_URL = LlmJudgeConfig().base_url
Scored = float | tuple[float, bool]


@dataclass(frozen=True)
class JudgeSpec:
    """One row source: a name, how it scores a record, and its own record cap."""

    name: str
    score: Callable[[LabelledClaim], Scored]
    """A record's score, or its score and the judge's own call (``judged``)."""
    kind: str = "judge"
    limit: int | None = None
    describe: str = ""


def token_overlap(claim: str, contexts: Sequence[str]) -> float:
    """The baseline of the module doc (``detectors.grading.word_overlap``, also the offline
    judge's whole-context overlap feature)."""
    return word_overlap(claim, contexts)


def judged_score(judge: Judge, record: LabelledClaim, *, one_passage: bool = False) -> float:
    """The score of the module doc (``one_passage``: the contexts joined into one)."""
    return judged(judge, record, one_passage=one_passage)[0]


def judged(judge: Judge, record: LabelledClaim, *, one_passage: bool = False) -> tuple[float, bool]:
    """The score of the module doc and the judge's own call (every scored claim supported:
    ``faithfulness`` = 1), from one judgment."""
    texts = (" ".join(record.contexts),) if one_passage else record.contexts
    contexts = [Context(f"{record.id}#{k + 1}", t) for k, t in enumerate(texts)]
    facts = [c.text for c in factual(decompose(record.claim))]
    if not facts:
        return NAN, False
    judgment = judge_claims(judge, facts, contexts, record.question)
    return support_score(judgment), faithfulness(judgment).value == 1.0


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
    """``LlmJudge`` answered by a local generator: yes/no style by default (scored by
    next-token probabilities when the generator is llama.cpp, else by the first word), or
    ``style="json"`` (pair mode, one format retry)."""

    name = "smollm2"

    def __init__(
        self,
        generator: Generator,
        *,
        style: Literal["json", "yesno"] = "yesno",
        evidence_words: int = SMOLLM2_EVIDENCE_WORDS,
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


def _scorer(judge: Judge, one_passage: bool) -> Callable[[LabelledClaim], Scored]:
    return lambda record: judged(judge, record, one_passage=one_passage)


def _llm_missing(config: LlmJudgeConfig, environ: Mapping[str, str]) -> str | None:
    if config.base_url != _DEFAULT_LLM_URL:
        return None
    if config.api_key_env and environ.get(config.api_key_env):
        return None
    return (
        "no endpoint: set PROBEGUARD_JUDGE__LLM__BASE_URL and PROBEGUARD_JUDGE__LLM__MODEL "
        f"for any OpenAI-compatible server, or {config.api_key_env or 'OPENAI_API_KEY'} "
        "for OpenAI"
    )


def _try_nli(config: JudgeConfig) -> tuple[Judge | None, str | None]:
    try:
        judge = NliJudge(**config.nli.model_dump())
        judge.judge(["The sky is blue."], ["The sky is blue."])
    except (ProbeGuardError, ImportError, OSError, RuntimeError, ValueError) as exc:
        return None, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return judge, None


def _try_smollm2() -> tuple[Judge | None, str | None]:
    if importlib.util.find_spec("cyllama") is None:
        return None, 'cyllama is not installed (pip install "probeguard[llm]")'
    try:
        return SmolJudge(LlamaCppGenerator(**SMOLLM2_SETTINGS)), None
    except (ProbeGuardError, OSError, ValueError) as exc:
        return None, str(exc)


def _available(
    names: Sequence[str], config: JudgeConfig, environ: Mapping[str, str]
) -> tuple[dict[str, Judge], dict[str, str]]:
    built: dict[str, Judge] = {}
    skipped: dict[str, str] = {}
    wanted = set(names)
    if "consensus" in wanted:
        wanted |= set(config.consensus.judges) if config.consensus else {"offline", "llm", "nli"}
    if "offline" in wanted:
        built["offline"] = OfflineJudge(**config.offline.model_dump())
    if "llm" in wanted:
        why = _llm_missing(config.llm, environ)
        if why is None:
            built["llm"] = LlmJudge(**config.llm.model_dump())
        else:
            skipped["llm"] = why
    if "nli" in wanted:
        nli, why = _try_nli(config)
        if nli is not None:
            built["nli"] = nli
        else:
            skipped["nli"] = why or "unavailable"
    if "smollm2" in wanted:
        smol, why = _try_smollm2()
        if smol is not None:
            built["smollm2"] = smol
        else:
            skipped["smollm2"] = why or "unavailable"
    return built, skipped


def _consensus(config: JudgeConfig, built: Mapping[str, Judge]) -> tuple[Judge | None, str | None]:
    members = list(config.consensus.judges) if config.consensus else ["offline", "llm", "nli"]
    rule = config.consensus.rule if config.consensus else "majority"
    have = [m for m in members if m in built]
    if len(have) < 2:
        return None, (
            f"needs two or more available judges among {', '.join(members)} "
            f"(available: {', '.join(have) or 'none'})"
        )
    return Consensus([built[m] for m in have], rule), None


def build_specs(
    names: Sequence[str],
    config: JudgeConfig,
    *,
    smollm2_limit: int | None,
    environ: Mapping[str, str] | None = None,
) -> tuple[list[JudgeSpec], dict[str, str]]:
    """The rows to run, in ``JUDGE_NAMES`` order with the baseline first, and the judges
    skipped with their reasons (module doc)."""
    unknown = [n for n in names if n not in JUDGE_NAMES]
    if unknown:
        raise ValueError(
            f"unknown judge(s) {', '.join(unknown)}; choose from {', '.join(JUDGE_NAMES)}"
        )
    built, skipped = _available(names, config, os.environ if environ is None else environ)
    specs = [
        JudgeSpec(
            BASELINE,
            lambda r: token_overlap(r.claim, r.contexts),
            kind="baseline",
            describe="share of the claim's content words found in the contexts",
        )
    ]
    for name in JUDGE_NAMES:
        if name not in names:
            continue
        judge: Judge | None
        if name == "consensus":
            judge, why = _consensus(config, built)
            if judge is None:
                skipped[name] = why or "unavailable"
                continue
        elif name in built:
            judge = built[name]
        else:
            continue
        one = name == "smollm2"
        specs.append(
            JudgeSpec(
                name,
                _scorer(judge, one),
                limit=smollm2_limit if one else None,
                describe=f"{judge.name} {judge.fingerprint()}",
            )
        )
    return specs, {n: skipped[n] for n in JUDGE_NAMES if n in skipped and n in names}

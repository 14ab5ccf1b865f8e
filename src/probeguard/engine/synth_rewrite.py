"""``dataset synth --rewrite llm``: each synthesized question reworded by an LLM, through the
runner, and kept only when the checks of ``probeguard.dataset.synth_rewrite`` pass.

The rewriting model is a ``Generator`` (``models.generators``): the OpenAI-compatible client
(any endpoint; the ``judge.llm`` settings of the config: ``base_url``, ``model``,
``api_key_env``, ``timeout_s``, ``max_retries``, ``seed``, ``concurrency``; the key read
from the environment at call time, never stored or printed) or llama.cpp with the bundled
SmolLM2 (offline). ``RewritePipeline`` wraps it as a pipeline, so the runner gives the calls
what it gives every pipeline call: a content-addressed cache (key = sha256 of the rewriter's
fingerprint and the request text), concurrency, retries of transient failures (the
runner's ``RetryPolicy`` with ``judge.llm.max_retries``; the client itself does not retry),
and errors as data. Decoding is greedy (temperature 0).

**Reply style** (``probeguard.dataset.rewrite_reply``): ``json`` or ``line``; by default
(``default_style``) ``line`` for llama.cpp (a 135M model does not keep to a JSON schema) and
``json`` for an endpoint. The style picks the prompt, so it is part of the fingerprint. A
``line`` reply is one question, so it gets at most ``LINE_MAX_TOKENS`` completion tokens (a
reply cut there has no ``?`` on its last line and is ``bad_reply``).

**Budget first** (``plan_rewrites``): the requests already in the cache are free; of the
others, at most ``max_calls`` are sent (in case order) and the rest keep their template
(``over_budget``). The estimate printed before any call: ``calls`` requests,
``prompt_tokens`` ≈ characters / ``CHARS_PER_TOKEN`` (OpenAI's rule of thumb for English) of
the system and user texts plus ``MESSAGE_OVERHEAD`` tokens per message, and at most
``max_tokens`` completion tokens per call.

**Deterministic given the cache**: the same cases and cache give the same replies, so the
same files, byte for byte; nothing time- or order-dependent is recorded.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from probeguard.config.models import ScanConfig
from probeguard.core.cases import Case
from probeguard.core.documents import Document
from probeguard.core.hashing import digest, sha256_hex
from probeguard.core.pipeline import Capability, Context, PipelineOutput, Variation
from probeguard.core.records import RunStats
from probeguard.dataset.rewrite_reply import REPLY_STYLES, ReplyStyle, style_texts
from probeguard.dataset.synth import Ranker, Synthesis
from probeguard.dataset.synth_rewrite import (
    REWRITE_VERSION,
    RewriteStats,
    Supported,
    apply_rewrites,
    rewrite_request,
)
from probeguard.detectors.judges import Judge, judge_claims
from probeguard.models.generators.base import Generation, Generator
from probeguard.models.generators.factory import make_generator
from probeguard.models.prompts import PromptTemplate
from probeguard.runner.cache import ResponseCache
from probeguard.runner.executor import Runner, RunnerConfig
from probeguard.runner.retry import RetryPolicy

__all__ = [
    "CHARS_PER_TOKEN",
    "LINE_MAX_TOKENS",
    "MESSAGE_OVERHEAD",
    "REWRITE_MAX_TOKENS",
    "REWRITERS",
    "RewriteBudget",
    "RewritePipeline",
    "RewritePlan",
    "RewriteRun",
    "default_style",
    "judge_support",
    "prompt_for",
    "make_rewriter",
    "rewrite_concurrency",
    "plan_rewrites",
    "rewrite_synthesis",
]

REWRITE_MAX_TOKENS = 128
"""Most completion tokens per rewrite (a question and its JSON wrapper)."""
LINE_MAX_TOKENS = 64
"""Most completion tokens per ``line``-style rewrite (one question)."""
CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD = 4
REWRITERS = ("openai", "llama_cpp")
"""``openai``: the OpenAI-compatible endpoint of ``judge.llm``; ``llama_cpp``: SmolLM2."""


def prompt_for(style: ReplyStyle) -> PromptTemplate:
    """The chat prompt of a reply style: its system text; the user text is the request."""
    name = f"rewrite-v{REWRITE_VERSION}" + ("" if style == "json" else f"-{style}")
    return PromptTemplate(name=name, system=style_texts(style)[0], user="{question}")


def default_style(kind: str) -> ReplyStyle:
    """``line`` for llama.cpp (SmolLM2), ``json`` for an OpenAI-compatible endpoint."""
    return "line" if kind == "llama_cpp" else "json"


def _output(generation: Generation) -> PipelineOutput:
    return PipelineOutput(answer=generation.text, usage=generation.usage)


class RewritePipeline:
    """A generator as a pipeline: the question is the rewrite request, the answer the reply."""

    name = "rewriter"
    capabilities: frozenset[Capability] = frozenset()

    def __init__(self, generator: Generator, style: ReplyStyle = "json") -> None:
        if style not in REPLY_STYLES:
            raise ValueError(f"reply style must be one of {REPLY_STYLES}, got {style!r}")
        self.generator = generator
        self.style: ReplyStyle = style
        self.prompt = prompt_for(style)

    def fingerprint(self) -> str:
        """sha256 of the rewrite version, the prompt and the generator's settings."""
        return sha256_hex(
            self.name,
            str(REWRITE_VERSION),
            digest(self.prompt.config()),
            digest(self.generator.config()),
        )

    def answer(self, question: str, variation: Variation | None = None) -> PipelineOutput:
        return _output(self.generator.generate(question, (), self.prompt))

    async def aanswer(self, question: str, variation: Variation | None = None) -> PipelineOutput:
        agenerate = getattr(self.generator, "agenerate", None)
        if agenerate is None:
            return await asyncio.to_thread(self.answer, question, variation)
        generation: Generation = await agenerate(question, (), self.prompt)
        return _output(generation)

    async def aclose(self) -> None:
        await self.generator.aclose()


def rewrite_concurrency(kind: str, config: ScanConfig) -> int:
    """Calls in flight: ``judge.llm.concurrency`` for an endpoint; 1 for llama.cpp, whose
    one model serves one call at a time (more would only wait on its lock, and time out)."""
    return 1 if kind == "llama_cpp" else config.judge.llm.concurrency


def make_rewriter(kind: str, config: ScanConfig, style: ReplyStyle = "json") -> Generator:
    """The rewriting model: ``openai`` from ``config.judge.llm`` (no client retries: the
    runner retries), or ``llama_cpp`` (SmolLM2, greedy); ``max_tokens`` by ``style``."""
    max_tokens = LINE_MAX_TOKENS if style == "line" else REWRITE_MAX_TOKENS
    if kind == "llama_cpp":
        return make_generator({"name": "llama_cpp", "max_tokens": max_tokens})
    llm = config.judge.llm
    spec: dict[str, Any] = {
        "name": "openai",
        "base_url": llm.base_url,
        "model": llm.model,
        "api_key_env": llm.api_key_env,
        "temperature": 0.0,
        "max_tokens": max_tokens,
        "timeout_s": llm.timeout_s,
        "max_retries": 0,
        "seed": llm.seed,
    }
    return make_generator(spec)


@dataclass(frozen=True)
class RewriteBudget:
    """What the rewrite will cost, known before any call."""

    cases: int
    calls: int
    """Requests to send (not cached, within ``max_calls``)."""
    cached: int
    over_budget: int
    prompt_tokens: int
    """Estimated prompt tokens of the calls to send (module docstring)."""
    completion_tokens: int
    """At most: ``calls`` × the generator's ``max_tokens``."""


@dataclass(frozen=True)
class RewritePlan:
    cases: tuple[Case, ...]
    """The synthesized cases, golden then attack."""
    requests: tuple[Case, ...]
    """One runner case per case: same id, the rewrite request as its question."""
    send: tuple[int, ...]
    """Indexes of the requests the runner gets (cached ones and those within budget)."""
    budget: RewriteBudget


def _tokens(system: str, request: str) -> int:
    return math.ceil((len(system) + len(request)) / CHARS_PER_TOKEN) + 2 * MESSAGE_OVERHEAD


def plan_rewrites(
    synthesis: Synthesis,
    pipeline: RewritePipeline,
    cache: ResponseCache | None,
    max_calls: int | None,
) -> RewritePlan:
    """Which requests are cached, which are sent, and the budget (module docstring)."""
    cases = (*synthesis.golden, *synthesis.attacks)
    requests = tuple(
        Case(id=c.id, question=rewrite_request(c, pipeline.style), probe="rewrite") for c in cases
    )
    fingerprint = pipeline.fingerprint()
    cached = [cache is not None and r.call_key(fingerprint) in cache for r in requests]
    fresh = [i for i, hit in enumerate(cached) if not hit]
    allowed = fresh if max_calls is None else fresh[:max_calls]
    send = tuple(sorted({*allowed, *(i for i, hit in enumerate(cached) if hit)}))
    max_tokens = int(pipeline.generator.config().get("max_tokens") or REWRITE_MAX_TOKENS)
    budget = RewriteBudget(
        cases=len(cases),
        calls=len(allowed),
        cached=sum(cached),
        over_budget=len(fresh) - len(allowed),
        prompt_tokens=sum(_tokens(pipeline.prompt.system, requests[i].question) for i in allowed),
        completion_tokens=len(allowed) * max_tokens,
    )
    return RewritePlan(cases=cases, requests=requests, send=send, budget=budget)


@dataclass(frozen=True)
class RewriteRun:
    synthesis: Synthesis
    """The synthesis with the accepted rewrites (every case's ``meta["rewrite"]`` set)."""
    stats: RewriteStats
    runner: RunStats


def rewrite_synthesis(
    plan: RewritePlan,
    pipeline: RewritePipeline,
    synthesis: Synthesis,
    *,
    cache: ResponseCache | None,
    concurrency: int,
    retries: int,
    rank: Ranker | None,
    k: int,
    supported: Supported | None = None,
) -> RewriteRun:
    """Send the planned requests through the runner and keep each rewrite that passes."""
    config = RunnerConfig(concurrency=concurrency, retry=RetryPolicy(retries=retries))
    result = Runner(pipeline, config, cache=cache).run([plan.requests[i] for i in plan.send])
    replies: list[str | None] = [None] * len(plan.cases)
    refusals = {i: "over_budget" for i in range(len(plan.cases)) if i not in set(plan.send)}
    for i, record in zip(plan.send, result.records, strict=True):
        if record.output is None:
            refusals[i] = "call_failed"
        else:
            replies[i] = record.output.answer
    cases, stats = apply_rewrites(
        plan.cases,
        replies,
        refusals,
        rank=rank,
        k=k,
        style=pipeline.style,
        supported=supported,
    )
    golden = tuple(c for c in cases if "attack_type" not in c.meta)
    attacks = tuple(c for c in cases if "attack_type" in c.meta)
    rewritten = Synthesis(
        golden=golden, attacks=attacks, stats=synthesis.stats, seed=synthesis.seed
    )
    return RewriteRun(synthesis=rewritten, stats=stats, runner=result.stats)


def judge_support(judge: Judge, documents: Sequence[Document]) -> Supported:
    """The support check (check 8 of ``dataset.synth_rewrite``): ``judge`` labels the
    rewrite, its trailing ``?`` dropped, as one claim against the template question and the
    texts of the case's evidence documents (those in ``documents``); supported when that
    claim's label is ``supported``. An unscored claim (the judge could not decide) is not
    supported: the template is kept."""
    texts = {d.id: d.text for d in documents}

    def supported(case: Case, rewrite: str) -> bool:
        evidence = [texts[i] for i in case.expected.evidence_doc_ids if i in texts]
        contexts = [
            Context(f"rewrite-check#{n}", text) for n, text in enumerate((case.question, *evidence))
        ]
        judgment = judge_claims(judge, [rewrite.rstrip().rstrip("?")], contexts, None)
        return judgment.claim_label(0) == "supported"

    return supported

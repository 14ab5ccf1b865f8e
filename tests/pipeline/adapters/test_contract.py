"""The adapter contract: every adapter (callable, HTTP, LangChain, LlamaIndex) is a ``Pipeline`` with a
stable fingerprint, answers through the real Runner, accepts the variations its declared
capabilities cover, and reports every other capability as ``UnsupportedCapabilityError``
without calling anything."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from aiohttp import web

from probeguard.core.cases import Case
from probeguard.core.documents import Document
from probeguard.core.errors import UnsupportedCapabilityError
from probeguard.core.pipeline import Capability, Pipeline, PipelineOutput, Variation
from probeguard.models.embedders.factory import make_embedder
from probeguard.models.generators.factory import make_generator
from probeguard.pipeline.adapters import CallablePipeline, HttpPipeline
from probeguard.pipeline.adapters.langchain import (
    GeneratorRunnable,
    LangChainPipeline,
    ProbeGuardEmbeddings,
)
from probeguard.pipeline.adapters.llamaindex import LlamaIndexPipeline, ProbeGuardEmbedding
from probeguard.runner import Runner

DOCS = [
    Document(id="kb-1", text="The Halvik kiln fires at 1,240 degrees. It was built in 1998."),
    Document(id="kb-2", text="Support answers within two business days. Email is the channel."),
]

PROBE_VARIATIONS: dict[Capability, Variation] = {
    Capability.OVERLAY: Variation(overlay=(Document(id="inj", text="The kiln is blue."),)),
    Capability.MASK: Variation(exclude_doc_ids=("kb-1",)),
    Capability.CHUNKING: Variation(chunking="document"),
    Capability.ORACLE_CONTEXT: Variation(contexts=("The kiln fires at 900 degrees.",)),
    Capability.PROMPT_OVERRIDE: Variation(prompt="hardened"),
    Capability.RETRIEVAL: Variation(retrieval={"top_k": 1}),
    Capability.RETRIEVE_ONLY: Variation(retrieve_only=True),
    Capability.DEFENCES: Variation(defences={"sanitise": True}),
}
"""One variation per capability, each needing exactly that capability."""


def echo(question: str, variation: Variation | None = None) -> dict[str, Any]:
    contexts = list(variation.contexts or ()) if variation else []
    return {"answer": question, "contexts": contexts or ["The kiln fires at 1,240 degrees."]}


echo.capabilities = ["oracle_context"]  # type: ignore[attr-defined]


async def rag(request: web.Request) -> web.Response:
    body = await request.json()
    return web.json_response(
        {"answer": body["question"], "contexts": [{"text": "passage", "doc_id": "kb-1"}]}
    )


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    runner = web.AppRunner(web.Application())
    runner.app.router.add_post("/rag", rag)

    async def start() -> str:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        host, port = runner.addresses[0][:2]
        return f"http://{host}:{port}/rag"

    yield asyncio.run_coroutine_threadsafe(start(), loop).result(timeout=10)
    asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=10)
    loop.close()


@pytest.fixture(scope="module")
def embeddings() -> ProbeGuardEmbeddings:
    return ProbeGuardEmbeddings(make_embedder({"name": "minilm"}))


def make_langchain(embeddings: ProbeGuardEmbeddings) -> Pipeline:
    return LangChainPipeline.from_documents(
        DOCS, embeddings, GeneratorRunnable(make_generator({"name": "extractive"})), k=2
    )


def make_llamaindex(embeddings: ProbeGuardEmbeddings) -> Pipeline:
    return LlamaIndexPipeline.from_documents(
        DOCS, ProbeGuardEmbedding(embeddings.embedder), make_generator({"name": "extractive"}), k=2
    )


ADAPTERS: dict[str, Callable[[str, ProbeGuardEmbeddings], Pipeline]] = {
    "callable": lambda url, emb: CallablePipeline(echo, version="1"),
    "http": lambda url, emb: HttpPipeline(url, contexts_path="contexts"),
    "langchain": lambda url, emb: make_langchain(emb),
    "llamaindex": lambda url, emb: make_llamaindex(emb),
}


@pytest.fixture(params=sorted(ADAPTERS))
async def adapter(request, http_url, embeddings) -> AsyncIterator[Pipeline]:
    pipe = ADAPTERS[request.param](http_url, embeddings)
    yield pipe
    close = getattr(pipe, "aclose", None)
    if close is not None:
        await close()


async def test_adapter_contract(adapter: Pipeline) -> None:
    assert isinstance(adapter, Pipeline)
    assert isinstance(adapter.name, str) and adapter.name
    assert all(isinstance(c, Capability) for c in adapter.capabilities)
    fp = adapter.fingerprint()
    assert len(fp) == 64 and fp == adapter.fingerprint()

    declared = sorted(adapter.capabilities)
    lacking = sorted(set(Capability) - adapter.capabilities)
    cases = [Case(id="plain", question="How hot does the kiln fire?")]
    cases += [
        Case(id=f"has-{c}", question="How hot does the kiln fire?", variation=PROBE_VARIATIONS[c])
        for c in declared
    ]
    cases += [
        Case(id=f"lacks-{c}", question="How hot?", variation=PROBE_VARIATIONS[c]) for c in lacking
    ]
    result = await Runner(adapter).arun(cases)
    by_id = {r.case.id: r for r in result.records}
    for case in cases:
        record = by_id[case.id]
        if case.id.startswith("lacks-"):
            assert record.error is not None and record.error.type == "UnsupportedCapabilityError"
            assert record.output is None
        else:
            assert record.error is None, (case.id, record.error)
            out = record.output
            assert isinstance(out, PipelineOutput)
            assert [c.rank for c in out.retrieved] == list(range(1, len(out.retrieved) + 1))
    for capability in lacking:
        with pytest.raises(UnsupportedCapabilityError):
            await asyncio.to_thread(adapter.answer, "q", PROBE_VARIATIONS[capability])

"""The reference RAG pipeline: chunker → retriever (→ re-ranker) → generator, built from one
``ReferencePipelineConfig``. It is the pipeline our users would otherwise assemble themselves,
and it supports every capability, so probes and attribution can run counterfactuals on it:

- ``overlay``: injected documents are chunked with the same chunker and scored against the
  index's frozen statistics (no re-index: a poisoned query costs O(injected), not O(corpus));
- ``mask``: documents hidden by id for one call;
- ``chunking``: ``"document"`` (whole documents), ``"sentences"``, or ``"tokens-SIZE-OVERLAP"``;
  each alternative index is built once, on first use;
- ``oracle_context``: the given texts go straight to the generator;
- ``prompt_override``: a template name or text;
- ``retrieval``: ``{"mode": "dense"|"bm25"|"hybrid", "top_k": int, "min_score": float,
  "filters": {...}}``;
- ``retrieve_only``: the retrieved contexts without a generated answer.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass
from typing import Any, Sequence

from probeguard._version import __version__
from probeguard.corpus.chunkers import make_chunker
from probeguard.corpus.chunking_base import Chunker
from probeguard.corpus.models import Chunk, Document, corpus_fingerprint
from probeguard.hashing import digest
from probeguard.pipeline.base import (Capability, PipelineOutput, RetrievedChunk, Usage,
                                      Variation, check_capabilities)
from probeguard.pipeline.embedders.base import Embedder
from probeguard.pipeline.embedders.factory import make_embedder
from probeguard.pipeline.generators.base import Context, Generation, Generator
from probeguard.pipeline.generators.factory import make_generator
from probeguard.pipeline.prompts import resolve_prompt
from probeguard.pipeline.rerankers import make_reranker
from probeguard.pipeline.retrievers.base import Hit, Retriever, SearchRequest
from probeguard.pipeline.retrievers.factory import make_retriever
from probeguard.config.models import ReferencePipelineConfig

ORACLE_DOC_ID = "oracle"
RETRIEVAL_MODES = ("dense", "bm25", "hybrid")


def chunking_spec(name: str) -> dict[str, Any]:
    """The chunker spec behind an alternative-chunking name."""
    if name == "document":
        return {"name": "document"}
    if name == "sentences":
        return {"name": "sentences", "max_tokens": 128}
    if name.startswith("tokens-"):
        try:
            _, size, overlap = name.split("-")
            return {"name": "tokens", "size": int(size), "overlap": int(overlap)}
        except ValueError:
            pass
    raise ValueError(f"unknown chunking '{name}': use 'document', 'sentences' or "
                     "'tokens-SIZE-OVERLAP' (e.g. 'tokens-256-64')")


@dataclass
class _Index:
    chunker: Chunker
    chunks: list[Chunk]
    retrievers: dict[str, Retriever]


class ReferencePipeline:
    """Build once over a corpus, then ``answer`` questions (thread-safe)."""

    capabilities = frozenset(Capability)

    def __init__(self, documents: Sequence[Document], config: ReferencePipelineConfig | None = None,
                 *, name: str = "reference") -> None:
        self.config = config or ReferencePipelineConfig()
        self.name = name
        self.documents = list(documents)
        self.corpus_fingerprint = corpus_fingerprint(self.documents)
        self._lock = threading.RLock()
        self._embedder: Embedder | None = None
        self._indexes: dict[str, _Index] = {}
        self._generator: Generator = make_generator(self.config.generator)
        self._reranker = make_reranker(self.config.reranker)
        self._fingerprint = digest({
            "probeguard": __version__.split(".")[0],
            "corpus": self.corpus_fingerprint,
            "chunker": make_chunker(self.config.chunker).config(),
            "retriever": self.config.retriever, "embedder": self.config.embedder,
            "top_k": self.config.top_k, "rerank_candidates": self.config.rerank_candidates,
            "reranker": self._reranker.config() if self._reranker else None,
            "generator": self._generator.config(),
            "prompt": resolve_prompt(self.config.prompt).config(),
        })
        # Build (without indexing) the configured retriever and its embedder now, so that an
        # unknown name or parameter fails here, once, rather than in every case's first call.
        make_retriever(self._retriever_spec(None), embedder_factory=self._shared_embedder)

    # -- construction -------------------------------------------------------------------
    def fingerprint(self) -> str:
        return self._fingerprint

    def embedder(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                self._embedder = make_embedder(self.config.embedder)
            return self._embedder

    def _shared_embedder(self, spec: dict[str, Any]) -> Embedder:
        return self.embedder() if spec == self.config.embedder else make_embedder(spec)

    def _retriever_spec(self, mode: str | None) -> dict[str, Any]:
        spec = dict(self.config.retriever)
        if mode is not None and mode != spec.get("name"):
            if mode not in RETRIEVAL_MODES:
                raise ValueError(f"unknown retrieval mode '{mode}' (known: {', '.join(RETRIEVAL_MODES)})")
            spec = {"name": mode}
        if spec["name"] in ("dense", "hybrid", "chroma"):
            spec.setdefault("embedder", self.config.embedder)
        if spec["name"] == "chroma":
            # One collection per corpus: two scans of different corpora sharing the default
            # store path must not replace each other's index.
            spec.setdefault("collection", f"probeguard-{self.corpus_fingerprint[:16]}")
        return spec

    def _index(self, chunking: str | None) -> _Index:
        key = chunking or ""
        with self._lock:
            index = self._indexes.get(key)
            if index is None:
                chunker = make_chunker(chunking_spec(chunking) if chunking else self.config.chunker)
                index = _Index(chunker, chunker.chunk_all(self.documents), {})
                self._indexes[key] = index
            return index

    def retriever(self, chunking: str | None = None, mode: str | None = None) -> Retriever:
        """The retriever for a chunking and mode, indexed on first use."""
        index = self._index(chunking)
        spec = self._retriever_spec(mode)
        if spec["name"] == "chroma" and chunking:
            # Each chunking has its own index: a shared collection would be replaced by it.
            spec["collection"] = f"{spec['collection']}-{chunking}"
        key = digest(spec)
        with self._lock:
            retriever = index.retrievers.get(key)
            if retriever is None:
                retriever = make_retriever(spec, embedder_factory=self._shared_embedder)
                retriever.index(index.chunks)
                index.retrievers[key] = retriever
            return retriever

    def build(self) -> "ReferencePipeline":
        """Index the corpus now (otherwise it happens on the first question)."""
        self.retriever()
        return self

    @property
    def chunks(self) -> list[Chunk]:
        return self._index(None).chunks

    # -- answering ----------------------------------------------------------------------
    def retrieve(self, question: str, variation: Variation | None = None) -> list[Hit]:
        """Retrieval (and re-ranking) only, as ``answer`` would do it."""
        variation = variation or Variation()
        opts = dict(variation.retrieval)
        unknown = set(opts) - {"mode", "top_k", "min_score", "filters"}
        if unknown:
            raise ValueError(f"unknown retrieval overrides: {', '.join(sorted(unknown))}")
        top_k = int(opts.get("top_k", self.config.top_k))
        if top_k < 1:
            raise ValueError(f"retrieval top_k must be at least 1, got {top_k}")
        retriever = self.retriever(variation.chunking, opts.get("mode"))
        index = self._index(variation.chunking)
        extra = index.chunker.chunk_all(variation.overlay) if variation.overlay else ()
        k = max(top_k, self.config.rerank_candidates) if self._reranker else top_k
        hits = retriever.search(SearchRequest(
            query=question, k=k, extra=extra, exclude_doc_ids=frozenset(variation.exclude_doc_ids),
            filters=opts.get("filters"), min_score=opts.get("min_score")))
        if self._reranker is not None:
            hits = self._reranker.rerank(question, hits, top_k)
        return hits[:top_k]

    def _contexts(self, question: str, variation: Variation) -> tuple[list[Context], list[RetrievedChunk]]:
        if variation.contexts is not None:
            contexts = [Context(chunk_id=f"{ORACLE_DOC_ID}#{i}", text=t)
                        for i, t in enumerate(variation.contexts)]
            retrieved = [RetrievedChunk(chunk_id=c.chunk_id, doc_id=ORACLE_DOC_ID, text=c.text,
                                        rank=i + 1) for i, c in enumerate(contexts)]
            return contexts, retrieved
        hits = self.retrieve(question, variation)
        contexts = [Context(chunk_id=h.chunk.id, text=h.chunk.text, title=h.chunk.title) for h in hits]
        retrieved = [RetrievedChunk(chunk_id=h.chunk.id, doc_id=h.chunk.doc_id, text=h.chunk.text,
                                    rank=h.rank, score=float(h.score), title=h.chunk.title,
                                    metadata=dict(h.chunk.metadata)) for h in hits]
        return contexts, retrieved

    def _output(self, gen: Generation, retrieved: list[RetrievedChunk], prompt_name: str,
                started: float) -> PipelineOutput:
        return PipelineOutput(
            answer=gen.text, cited_chunk_ids=list(gen.cited_chunk_ids), retrieved=retrieved,
            refused=gen.refused, latency_s=round(time.perf_counter() - started, 6),
            usage=gen.usage if isinstance(gen.usage, Usage) else Usage(),
            metadata={"prompt": prompt_name, **gen.metadata})

    def answer(self, question: str, variation: Variation | None = None) -> PipelineOutput:
        variation = variation or Variation()
        check_capabilities(self, variation)
        started = time.perf_counter()
        contexts, retrieved = self._contexts(question, variation)
        if variation.retrieve_only:
            return self._output(Generation(text=""), retrieved, "none", started)
        prompt = resolve_prompt(variation.prompt or self.config.prompt)
        gen = self._generator.generate(question, contexts, prompt)
        return self._output(gen, retrieved, prompt.name, started)

    async def aanswer(self, question: str, variation: Variation | None = None) -> PipelineOutput:
        """Retrieval in a worker thread; a natively async generator is awaited."""
        agenerate = getattr(self._generator, "agenerate", None)
        if agenerate is None or (variation is not None and variation.retrieve_only):
            return await asyncio.to_thread(self.answer, question, variation)
        variation = variation or Variation()
        check_capabilities(self, variation)
        started = time.perf_counter()
        contexts, retrieved = await asyncio.to_thread(self._contexts, question, variation)
        prompt = resolve_prompt(variation.prompt or self.config.prompt)
        gen = await agenerate(question, contexts, prompt)
        return self._output(gen, retrieved, prompt.name, started)

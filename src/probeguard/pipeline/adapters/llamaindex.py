"""Wrap a LlamaIndex RAG pipeline: a ``VectorStoreIndex`` and a generation step (a LlamaIndex
``LLM``, a response synthesizer, or a ProbeGuard ``Generator``). Needs
``probeguard[llamaindex]``.

    from probeguard.pipeline.adapters.llamaindex import LlamaIndexPipeline
    pipeline = LlamaIndexPipeline(index, llm, k=4)                 # your own parts
    pipeline = LlamaIndexPipeline.from_documents(docs, embed_model, llm, chunker="sentences")

**One call.** Retrieve the top ``k`` nodes for the question (the index's retriever, the query
embedded once), then run the generation step on them: an ``LLM`` gets the prompt template's
chat messages (``models.prompts``: numbered passages, then the question; citations read from
``[n]`` markers, a refusal from the wording); a response synthesizer gets ``synthesize(question,
nodes)``; a ProbeGuard ``Generator`` gets the nodes as contexts. A node's chunk id is its
``node_id``; its source document id is ``metadata["doc_id"]`` (else ``ref_doc_id``).

**Capabilities**, each run for real on the index (as in the LangChain adapter):

* ``overlay`` — ``"merge"`` (default for the in-memory ``SimpleVectorStore``): the call's
  nodes go in a fresh ``VectorStoreIndex`` with the same embedding model, searched with the
  same query vector, merged by score; ``"add_delete"``: ``insert_nodes`` then ``delete_nodes``
  after the search, under a lock every search holds. Concurrent cases never see each
  other's nodes;
* ``mask`` — nodes of excluded documents are dropped, fetching twice as many until ``k``
  remain or the index has no more;
* ``oracle_context``, ``retrieve_only``, ``retrieval`` (``top_k``, ``min_score``; ``mode``
  only ``"dense"``) — as in ``core.pipeline``;
* ``prompt_override`` — for an ``LLM`` and a ProbeGuard ``Generator`` (a synthesizer keeps its
  own templates);
* ``chunking`` — for a pipeline built by ``from_documents``: re-chunked into a new index.

Ties (equal texts) go to the earlier-inserted node, main index first, as in the reference
pipeline's dense retriever. **Fingerprint**: as the LangChain adapter's (class names, corpus
and chunker for ``from_documents``, ``k``, the generation step, prompt, overlay mode,
``version``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any, Literal

from probeguard.core.documents import Chunk, Document, corpus_fingerprint
from probeguard.core.errors import InputError, MissingExtraError, PipelineCallError
from probeguard.core.pipeline import (
    ORACLE_DOC_ID,
    Capability,
    Context,
    PipelineOutput,
    RetrievedChunk,
    Variation,
    check_capabilities,
)
from probeguard.corpus.chunkers import make_chunker
from probeguard.corpus.chunking_base import Chunker
from probeguard.models.embedders.base import Embedder
from probeguard.models.generators.base import Generation, Generator
from probeguard.models.prompts import looks_like_refusal, parse_citations, resolve_prompt
from probeguard.pipeline.adapters.framework import adapter_fingerprint, rank_hits, retrieval_options
from probeguard.pipeline.reference import chunking_spec

try:
    from llama_index.core import VectorStoreIndex
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.llms import LLM, ChatMessage
    from llama_index.core.response_synthesizers import BaseSynthesizer
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
    from llama_index.core.vector_stores import SimpleVectorStore
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("llamaindex", "llama_index.core") from exc

__all__ = ["LlamaIndexPipeline", "ProbeGuardEmbedding", "chunk_nodes", "whole_document_nodes"]

OverlayMode = Literal["merge", "add_delete"]
Step = LLM | BaseSynthesizer | Generator


class ProbeGuardEmbedding(BaseEmbedding):
    """A ProbeGuard ``Embedder`` (e.g. MiniLM ONNX) as a LlamaIndex embedding model."""

    def __init__(self, embedder: Embedder, **kwargs: Any) -> None:
        super().__init__(model_name=str(embedder.config().get("name", "probeguard")), **kwargs)
        self._embedder = embedder

    @property
    def embedder(self) -> Embedder:
        return self._embedder

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return [[float(x) for x in row] for row in self._embedder.embed(texts)]

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._get_text_embeddings([text])[0]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._get_text_embedding(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)


def _node(chunk_id: str, doc_id: str, text: str, title: str, metadata: dict[str, Any]) -> TextNode:
    """A node whose embedding and prompt text is its text alone: LlamaIndex would otherwise
    prepend every metadata key (``doc_id: ...``) to what it embeds and shows the LLM."""
    meta = {**metadata, "doc_id": doc_id, "title": title}
    return TextNode(
        id_=chunk_id,
        text=text,
        metadata=meta,
        excluded_embed_metadata_keys=list(meta),
        excluded_llm_metadata_keys=list(meta),
    )


def chunk_nodes(documents: Sequence[Document], chunker: Chunker) -> list[TextNode]:
    """Each chunk as a ``TextNode`` (``id_`` = chunk id; ``doc_id`` and ``title`` in the
    metadata, with the document's metadata)."""
    chunks: list[Chunk] = chunker.chunk_all(documents)
    return [_node(c.id, c.doc_id, c.text, c.title, dict(c.metadata)) for c in chunks]


def whole_document_nodes(documents: Sequence[Document]) -> list[TextNode]:
    """The default overlay split: one node per document (``id_`` = the document id)."""
    return [_node(d.id, d.id, d.text, d.title, dict(d.metadata)) for d in documents]


def _doc_id(node: Any) -> str:
    value = node.metadata.get("doc_id") or getattr(node, "ref_doc_id", None)
    return "" if value is None else str(value)


def _context(node: Any) -> Context:
    return Context(node.node_id, node.get_content(), str(node.metadata.get("title") or ""))


def _retrieved(node: Any, rank: int, score: float | None) -> RetrievedChunk:
    meta = {k: v for k, v in node.metadata.items() if k not in ("doc_id", "title")}
    return RetrievedChunk(
        chunk_id=node.node_id,
        doc_id=_doc_id(node),
        text=node.get_content(),
        rank=rank,
        score=score,
        title=str(node.metadata.get("title") or ""),
        metadata=meta,
    )


class LlamaIndexPipeline:
    """A LlamaIndex ``VectorStoreIndex`` + generation step as a pipeline (module docstring)."""

    mode = "dense"

    def __init__(
        self,
        index: VectorStoreIndex,
        generate: Step,
        *,
        k: int = 4,
        name: str = "llamaindex",
        prompt: str | None = None,
        overlay_mode: OverlayMode | None = None,
        version: str = "",
    ) -> None:
        if not isinstance(index, VectorStoreIndex):
            raise InputError(
                f"expected a VectorStoreIndex, got {type(index).__name__}", field="index"
            )
        if not isinstance(generate, (LLM, BaseSynthesizer, Generator)):
            raise InputError(
                "the generation step must be a LlamaIndex LLM, a response synthesizer or a "
                f"ProbeGuard Generator, got {type(generate).__name__}",
                field="generate",
            )
        resolve_prompt(prompt)
        self.name, self.k, self.prompt, self.version = name, int(k), prompt, version
        self._generate = generate
        self._embed_model: BaseEmbedding = index._embed_model
        self.overlay_mode: OverlayMode = overlay_mode or (
            "merge" if isinstance(index.vector_store, SimpleVectorStore) else "add_delete"
        )
        self._indexes: dict[str, VectorStoreIndex] = {"": index}
        self._split: Any = whole_document_nodes
        self._documents: tuple[Document, ...] | None = None
        self._lock = threading.RLock()
        self._parts: dict[str, Any] = {"vector_store": type(index.vector_store).__name__}
        caps = {
            Capability.OVERLAY,
            Capability.MASK,
            Capability.ORACLE_CONTEXT,
            Capability.RETRIEVAL,
            Capability.RETRIEVE_ONLY,
        }
        if not isinstance(generate, BaseSynthesizer):
            caps.add(Capability.PROMPT_OVERRIDE)
        self.capabilities: frozenset[Capability] = frozenset(caps)

    @classmethod
    def from_documents(
        cls,
        documents: Sequence[Document],
        embed_model: BaseEmbedding,
        generate: Step,
        *,
        chunker: dict[str, Any] | str = "sentences",
        **kwargs: Any,
    ) -> LlamaIndexPipeline:
        """Chunk ``documents`` with a ProbeGuard chunker into a ``VectorStoreIndex``; overlays
        are chunked the same way, and the pipeline also has ``chunking``."""
        made = make_chunker(chunker)
        index = VectorStoreIndex(chunk_nodes(documents, made), embed_model=embed_model)
        pipe = cls(index, generate, **kwargs)
        pipe._documents = tuple(documents)
        pipe._split = lambda docs: chunk_nodes(docs, made)
        pipe._parts.update(corpus=corpus_fingerprint(documents), chunker=made.config())
        pipe.capabilities = pipe.capabilities | {Capability.CHUNKING}
        return pipe

    def fingerprint(self) -> str:
        return adapter_fingerprint(
            "llamaindex",
            self._parts,
            ("embed_model", self._embed_model),
            self._generate,
            k=self.k,
            prompt=self.prompt,
            overlay_mode=self.overlay_mode,
            version=self.version,
        )

    # -- retrieval ----------------------------------------------------------------------
    def _index(self, chunking: str | None) -> VectorStoreIndex:
        key = chunking or ""
        with self._lock:
            if key not in self._indexes:
                assert self._documents is not None  # CHUNKING is declared only then
                nodes = chunk_nodes(self._documents, make_chunker(chunking_spec(key)))
                self._indexes[key] = VectorStoreIndex(nodes, embed_model=self._embed_model)
            return self._indexes[key]

    def _split_for(self, chunking: str | None) -> Any:
        if chunking and self._documents is not None:
            made = make_chunker(chunking_spec(chunking))
            return lambda docs: chunk_nodes(docs, made)
        return self._split

    def retrieve(self, question: str, variation: Variation | None = None) -> list[NodeWithScore]:
        """The scored nodes of one call, best first, as ``answer`` sees them."""
        variation = variation or Variation()
        top_k, min_score = retrieval_options(
            variation, default_k=self.k, mode=self.mode, pipeline=self.name
        )
        index = self._index(variation.chunking)
        overlay = (
            self._split_for(variation.chunking)(variation.overlay) if variation.overlay else []
        )
        excluded = frozenset(variation.exclude_doc_ids)
        query = QueryBundle(question, embedding=self._embed_model.get_query_embedding(question))
        if self.overlay_mode == "merge":
            hits = _search(index, query, top_k, excluded, offset=0)
            if overlay:
                extra = VectorStoreIndex(overlay, embed_model=self._embed_model)
                hits += _search(extra, query, top_k, excluded, offset=len(_order(index)))
        else:
            with self._lock:
                if overlay:
                    index.insert_nodes(overlay)
                try:
                    hits = _search(index, query, top_k, excluded, offset=0)
                finally:
                    if overlay:
                        ids = [n.node_id for n in overlay]
                        index.delete_nodes(ids, delete_from_docstore=True)
        ranked = rank_hits(hits, top_k, min_score)
        return [NodeWithScore(node=n, score=s) for n, s in ranked]

    # -- answering ----------------------------------------------------------------------
    def _generation(
        self, question: str, nodes: list[NodeWithScore], prompt: str | None
    ) -> Generation:
        contexts = [_context(n.node) for n in nodes]
        gen = self._generate
        if isinstance(gen, Generator):
            return gen.generate(question, contexts, resolve_prompt(prompt))
        if isinstance(gen, LLM):
            template = resolve_prompt(prompt)
            system, user = (m["content"] for m in template.messages(question, contexts))
            reply = gen.chat(
                [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]
            )
            text, meta = str(reply.message.content or "").strip(), {"prompt": template.name}
        else:
            response = gen.synthesize(question, nodes)
            if not hasattr(response, "response"):
                raise PipelineCallError(
                    f"{self.name}: the synthesizer streams ({type(response).__name__}); "
                    "build it with streaming=False"
                )
            text, meta = str(response.response or "").strip(), {}
        return Generation(
            text=text,
            cited_chunk_ids=parse_citations(text, [c.chunk_id for c in contexts]),
            refused=looks_like_refusal(text),
            metadata=meta,
        )

    def answer(self, question: str, variation: Variation | None = None) -> PipelineOutput:
        started = time.perf_counter()
        variation = variation or Variation()
        check_capabilities(self, variation)
        if variation.contexts is not None:
            nodes = [
                NodeWithScore(
                    node=_node(f"{ORACLE_DOC_ID}#{i}", ORACLE_DOC_ID, t, "", {}), score=None
                )
                for i, t in enumerate(variation.contexts)
            ]
        else:
            nodes = self.retrieve(question, variation)
        retrieved = [_retrieved(n.node, i + 1, n.score) for i, n in enumerate(nodes)]
        if variation.retrieve_only:
            gen = Generation(text="", metadata={"prompt": "none"})
        else:
            gen = self._generation(question, nodes, variation.prompt or self.prompt)
        return PipelineOutput(
            answer=gen.text,
            cited_chunk_ids=list(gen.cited_chunk_ids),
            retrieved=retrieved,
            refused=gen.refused,
            latency_s=round(time.perf_counter() - started, 6),
            metadata=dict(gen.metadata),
        )

    def __repr__(self) -> str:
        return f"LlamaIndexPipeline({self._parts['vector_store']}, k={self.k}, name={self.name!r})"


def _order(index: VectorStoreIndex) -> dict[str, int]:
    """Each node's insertion position in the index."""
    return {str(i): n for n, i in enumerate(index.index_struct.nodes_dict)}


def _search(
    index: VectorStoreIndex, query: QueryBundle, k: int, excluded: frozenset[str], *, offset: int
) -> list[tuple[Any, float, int]]:
    """``(node, score, offset + insertion position)`` of the best ``2k`` nodes not excluded
    (``2k`` so that ties at the cut are decided by position): fetch ``2k``, and while the
    mask leaves fewer and the index returned all it was asked for, fetch twice as many."""
    order = _order(index)
    fetch = 2 * k
    while True:
        hits = index.as_retriever(similarity_top_k=fetch).retrieve(query)
        kept = [h for h in hits if _doc_id(h.node) not in excluded]
        if len(kept) >= 2 * k or len(hits) < fetch:
            return [
                (h.node, float(h.score or 0.0), offset + order.get(h.node.node_id, len(order)))
                for h in kept
            ]
        fetch *= 2

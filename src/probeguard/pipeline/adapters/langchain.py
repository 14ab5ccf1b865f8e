"""Wrap a LangChain RAG pipeline: a vector store (or its ``VectorStoreRetriever``) and a
generation step (a chat model, an LLM, or any ``Runnable``). Needs ``probeguard[langchain]``.

    from langchain_core.vectorstores import InMemoryVectorStore
    from probeguard.pipeline.adapters.langchain import LangChainPipeline
    pipeline = LangChainPipeline(store, chat_model, k=4)          # your own parts
    pipeline = LangChainPipeline.from_documents(docs, embeddings, chat_model, chunker="sentences")

**One call.** Retrieve the top ``k`` documents for the question (``similarity_search_with_score``),
then run the generation step on them:

* a chat model gets the prompt template's messages (``models.prompts``: the system text, then
  the numbered passages ``[1] ...`` and the question); an LLM gets the same text as one string;
  citations are read from ``[n]`` markers and a refusal from the answer's wording;
* any other ``Runnable`` is invoked with ``{"question", "context": [Document, ...], "prompt"}``
  and returns a string, a message, or a dict with ``answer`` (optionally ``cited_chunk_ids``,
  ``refused``, ``metadata``). ``GeneratorRunnable`` wraps a ProbeGuard generator this way.

A retrieved document's chunk id is its ``id``; its source document id is ``metadata["doc_id"]``
(or ``source``, ``document_id``): mask and the retrieval metrics need it.

**Capabilities** (``core.pipeline``), each run for real on the store:

* ``overlay`` — the call's extra documents (split by ``split``; by default one document each)
  are put in a fresh ``InMemoryVectorStore`` with the store's own embeddings, searched with the
  same query vector and merged with the main hits by score (``overlay_mode="merge"``, the
  default for an ``InMemoryVectorStore``: each call has its own, so concurrent cases never see
  each other's documents). For other stores (``"add_delete"``) they are added to the store with
  their ids and deleted after the search, under a lock that every search of this pipeline
  holds, so again no other case sees them (retrieval is then serialised; generation is not);
* ``mask`` — documents whose source id is excluded are filtered out (a filter callable for an
  ``InMemoryVectorStore``; otherwise over-fetching, doubling ``k`` until ``k`` remain);
* ``oracle_context`` — the generation step runs on the given texts, retrieval skipped;
* ``prompt_override`` — for a chat model or LLM, and for a runnable whose ``accepts_prompt``
  attribute is true (``GeneratorRunnable``);
* ``retrieval`` — ``{"top_k": int, "min_score": float}``; ``mode`` only as ``"dense"`` (the
  store's own search: asking for another mode is an ``UnsupportedCapabilityError``);
* ``retrieve_only`` — the retrieved documents without generating;
* ``chunking`` — only for a pipeline built by ``from_documents``: the documents are re-chunked
  (``"document"``, ``"sentences"``, ``"tokens-SIZE-OVERLAP"``) into a new
  ``InMemoryVectorStore``, built once per chunking.

**Fingerprint** = sha256 of the store's and embeddings' class names, the corpus fingerprint
and chunker (``from_documents``), ``k``, the generation step (its class, and its ``config()``
where it has one), the prompt, the overlay mode and ``version``. A store filled by other code
is not hashed: bump ``version`` when its contents change, or cached answers are served.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

from probeguard.core.documents import Document, corpus_fingerprint
from probeguard.core.errors import InputError
from probeguard.core.pipeline import (
    ORACLE_DOC_ID,
    Capability,
    PipelineOutput,
    Variation,
    check_capabilities,
)
from probeguard.corpus.chunkers import make_chunker
from probeguard.corpus.chunking_base import Chunker
from probeguard.models.generators.base import Generation
from probeguard.models.prompts import resolve_prompt
from probeguard.pipeline.adapters.framework import adapter_fingerprint, rank_hits, retrieval_options
from probeguard.pipeline.adapters.langchain_parts import (
    BaseChatModel,
    BaseLanguageModel,
    BaseLLM,
    Embeddings,
    GeneratorRunnable,
    InMemoryVectorStore,
    LCDocument,
    ProbeGuardEmbeddings,
    Runnable,
    VectorStore,
    VectorStoreRetriever,
    chunk_documents,
    context_of,
    doc_id_of,
    read_generation,
    retrieved_of,
)
from probeguard.pipeline.reference import chunking_spec

__all__ = ["GeneratorRunnable", "LangChainPipeline", "ProbeGuardEmbeddings", "whole_documents"]

Hits = list[tuple[LCDocument, float]]
OverlayMode = Literal["merge", "add_delete"]


def whole_documents(documents: Sequence[Document]) -> list[LCDocument]:
    """The default overlay split: each document as one LangChain document (``id`` and
    ``metadata["doc_id"]`` = the document id)."""
    return [
        LCDocument(
            page_content=d.text,
            id=d.id,
            metadata={**d.metadata, "doc_id": d.id, "title": d.title},
        )
        for d in documents
    ]


def _split_with(chunker: Chunker) -> Callable[[Sequence[Document]], list[LCDocument]]:
    return functools.partial(chunk_documents, chunker=chunker)


class LangChainPipeline:
    """A LangChain vector store + generation step as a pipeline (module docstring)."""

    mode = "dense"
    """The retrieval mode a ``retrieval`` override may name: the store's own search."""

    def __init__(
        self,
        store: VectorStore | VectorStoreRetriever,
        generate: Runnable[Any, Any],
        *,
        k: int | None = None,
        name: str = "langchain",
        prompt: str | None = None,
        split: Callable[[Sequence[Document]], list[LCDocument]] = whole_documents,
        overlay_mode: OverlayMode | None = None,
        version: str = "",
    ) -> None:
        if isinstance(store, VectorStoreRetriever):
            k = k if k is not None else int(store.search_kwargs.get("k", 4))
            store = store.vectorstore
        if not isinstance(store, VectorStore):
            raise InputError(
                f"the LangChain adapter needs a VectorStore or a VectorStoreRetriever, "
                f"got {type(store).__name__}",
                field="store",
            )
        if not isinstance(generate, Runnable):
            raise InputError(
                f"the generation step must be a chat model, an LLM or a Runnable, got "
                f"{type(generate).__name__}",
                field="generate",
            )
        if store.embeddings is None:
            raise InputError(f"{type(store).__name__} exposes no embeddings", field="store")
        self.name = name
        self.k = 4 if k is None else int(k)
        self.prompt = prompt
        resolve_prompt(prompt)  # an unknown template name fails here, once
        self.overlay_mode: OverlayMode = overlay_mode or (
            "merge" if isinstance(store, InMemoryVectorStore) else "add_delete"
        )
        self._generate = generate
        self._embeddings: Embeddings = store.embeddings
        self._stores: dict[str, tuple[VectorStore, Callable[..., list[LCDocument]]]] = {
            "": (store, split)
        }
        self._documents: tuple[Document, ...] | None = None
        self._lock = threading.RLock()
        self._orders: dict[int, dict[str, int]] = {}
        self._parts: dict[str, Any] = {"store": type(store).__name__}
        self.version = version
        caps = {
            Capability.OVERLAY,
            Capability.MASK,
            Capability.ORACLE_CONTEXT,
            Capability.RETRIEVAL,
            Capability.RETRIEVE_ONLY,
        }
        if isinstance(generate, BaseLanguageModel) or getattr(generate, "accepts_prompt", False):
            caps.add(Capability.PROMPT_OVERRIDE)
        self.capabilities: frozenset[Capability] = frozenset(caps)

    @classmethod
    def from_documents(
        cls,
        documents: Sequence[Document],
        embeddings: Embeddings,
        generate: Runnable[Any, Any],
        *,
        chunker: dict[str, Any] | str = "sentences",
        **kwargs: Any,
    ) -> LangChainPipeline:
        """Chunk ``documents`` with a ProbeGuard chunker (a spec or name, ``probeguard list
        chunkers``) into an ``InMemoryVectorStore``; overlays are chunked the same way, and
        the pipeline also has ``chunking``."""
        made = make_chunker(chunker)
        store = InMemoryVectorStore(embedding=embeddings)
        store.add_documents(chunk_documents(documents, made))
        pipe = cls(store, generate, split=_split_with(made), **kwargs)
        pipe._documents = tuple(documents)
        pipe._parts.update(corpus=corpus_fingerprint(documents), chunker=made.config())
        pipe.capabilities = pipe.capabilities | {Capability.CHUNKING}
        return pipe

    def fingerprint(self) -> str:
        return adapter_fingerprint(
            "langchain",
            self._parts,
            ("embeddings", self._embeddings),
            self._generate,
            k=self.k,
            prompt=self.prompt,
            overlay_mode=self.overlay_mode,
            version=self.version,
        )

    # -- retrieval ----------------------------------------------------------------------
    def _store(self, chunking: str | None) -> tuple[VectorStore, Callable[..., list[LCDocument]]]:
        key = chunking or ""
        with self._lock:
            if key not in self._stores:
                assert self._documents is not None  # CHUNKING is declared only then
                chunker = make_chunker(chunking_spec(key))
                store = InMemoryVectorStore(embedding=self._embeddings)
                store.add_documents(chunk_documents(self._documents, chunker))
                self._stores[key] = (store, _split_with(chunker))
            return self._stores[key]

    def retrieve(self, question: str, variation: Variation | None = None) -> Hits:
        """The (document, score) hits of one call, best first, as ``answer`` sees them."""
        variation = variation or Variation()
        top_k, min_score = retrieval_options(
            variation, default_k=self.k, mode=self.mode, pipeline=self.name
        )
        store, split = self._store(variation.chunking)
        overlay = split(variation.overlay) if variation.overlay else []
        excluded = frozenset(variation.exclude_doc_ids)
        if self.overlay_mode == "merge" and isinstance(store, InMemoryVectorStore):
            return self._merged(store, question, top_k, min_score, excluded, overlay)
        hits = self._added(store, question, top_k, excluded, overlay)
        return [h for h in hits if min_score is None or h[1] >= min_score][:top_k]

    def _merged(
        self,
        store: InMemoryVectorStore,
        question: str,
        k: int,
        min_score: float | None,
        excluded: frozenset[str],
        overlay: list[LCDocument],
    ) -> Hits:
        """Main hits and the call's own overlay store's hits, merged by score (``rank_hits``:
        ties to the earlier-added document, main store first); ``2k`` are fetched from each
        so that a tie at the cut is decided by that order, not by the store's sort."""
        vector = self._embeddings.embed_query(question)
        keep = (lambda d: doc_id_of(d) not in excluded) if excluded else None
        order = self._order(store)
        hits = store.similarity_search_with_score_by_vector(vector, k=2 * k, filter=keep)
        ranked = [(d, s, order.get(str(d.id), len(order))) for d, s in hits]
        if overlay:
            extra = InMemoryVectorStore(embedding=self._embeddings)
            ids = extra.add_documents(overlay)
            pos = {i: len(order) + j for j, i in enumerate(ids)}
            more = extra.similarity_search_with_score_by_vector(vector, k=2 * k, filter=keep)
            ranked += [(d, s, pos.get(str(d.id), len(order) + len(pos))) for d, s in more]
        return rank_hits(ranked, k, min_score)

    def _order(self, store: InMemoryVectorStore) -> dict[str, int]:
        """Each stored id's insertion position, cached until the store's size changes."""
        with self._lock:
            cached = self._orders.get(id(store))
            if cached is None or len(cached) != len(store.store):
                cached = {str(i): n for n, i in enumerate(store.store)}
                self._orders[id(store)] = cached
            return cached

    def _added(
        self,
        store: VectorStore,
        question: str,
        k: int,
        excluded: frozenset[str],
        overlay: list[LCDocument],
    ) -> Hits:
        """Overlay added with its ids and deleted after the search, under the lock every
        search of this mode holds."""
        with self._lock:
            ids = store.add_documents(overlay) if overlay else []
            try:
                return _search_excluding(store, question, k, excluded)
            finally:
                if ids:
                    store.delete(ids)

    # -- answering ----------------------------------------------------------------------
    def _generation(self, question: str, docs: list[LCDocument], prompt: str | None) -> Generation:
        contexts = [context_of(d) for d in docs]
        gen = self._generate
        source = f"{self.name} ({type(gen).__name__})"
        if isinstance(gen, BaseLanguageModel):
            template = resolve_prompt(prompt)
            system, user = (m["content"] for m in template.messages(question, contexts))
            if isinstance(gen, BaseChatModel):
                value = gen.invoke([("system", system), ("human", user)])
            else:
                value = gen.invoke(f"{system}\n\n{user}" if isinstance(gen, BaseLLM) else user)
            out = read_generation(value, contexts, source=source)
            return Generation(
                text=out.text,
                cited_chunk_ids=out.cited_chunk_ids,
                refused=out.refused,
                metadata={"prompt": template.name, **out.metadata},
            )
        value = gen.invoke({"question": question, "context": docs, "prompt": prompt})
        return read_generation(value, contexts, source=source)

    def answer(self, question: str, variation: Variation | None = None) -> PipelineOutput:
        started = time.perf_counter()
        variation = variation or Variation()
        check_capabilities(self, variation)
        if variation.contexts is not None:
            docs = [
                LCDocument(page_content=t, id=f"{ORACLE_DOC_ID}#{i}", metadata={"doc_id": "oracle"})
                for i, t in enumerate(variation.contexts)
            ]
            scores: list[float | None] = [None] * len(docs)
        else:
            hits = self.retrieve(question, variation)
            docs, scores = [d for d, _ in hits], [float(s) for _, s in hits]
        retrieved = [retrieved_of(d, i + 1, s) for i, (d, s) in enumerate(zip(docs, scores))]
        if variation.retrieve_only:
            gen = Generation(text="", metadata={"prompt": "none"})
        else:
            gen = self._generation(question, docs, variation.prompt or self.prompt)
        return PipelineOutput(
            answer=gen.text,
            cited_chunk_ids=list(gen.cited_chunk_ids),
            retrieved=retrieved,
            refused=gen.refused,
            latency_s=round(time.perf_counter() - started, 6),
            metadata=dict(gen.metadata),
        )

    def __repr__(self) -> str:
        return f"LangChainPipeline({self._parts['store']}, k={self.k}, name={self.name!r})"


def _search_excluding(store: VectorStore, question: str, k: int, excluded: frozenset[str]) -> Hits:
    """The top ``k`` hits whose source id is not excluded: fetch ``k``, and while the
    filter leaves fewer than ``k`` and the store returned all it was asked for, fetch
    twice as many."""
    fetch = k
    while True:
        hits = store.similarity_search_with_score(question, k=fetch)
        kept = [h for h in hits if doc_id_of(h[0]) not in excluded]
        if len(kept) >= k or len(hits) < fetch:
            return kept[:k]
        fetch *= 2

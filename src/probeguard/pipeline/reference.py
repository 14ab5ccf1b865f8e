"""The reference RAG pipeline: chunker → retriever (→ re-ranker) → generator, built from one
``ReferencePipelineConfig``. It is the pipeline our users would otherwise assemble themselves,
and it supports every capability, so probes and attribution can run counterfactuals on it:

- ``overlay``: injected documents are chunked with the same chunker and scored against the
  index's frozen statistics (no re-index: a poisoned query costs O(injected), not O(corpus));
- ``mask``: documents hidden by id for one call;
- ``chunking``: ``"document"`` (whole documents), ``"sentences"``, or ``"tokens-SIZE-OVERLAP"``;
  each alternative index is built once (by ``prepare``, or else on first use);
- ``oracle_context``: the given texts go straight to the generator;
- ``prompt_override``: a template name or text;
- ``retrieval``: ``{"mode": "dense"|"bm25"|"hybrid", "top_k": int, "min_score": float,
  "filters": {...}, "rerank": bool}``; ``"rerank": False`` skips the configured re-ranker for
  the call (the retriever's own order, cut to ``top_k``: the counterfactual that tells
  evidence re-ranked out of the top k from evidence never retrieved);
- ``retrieve_only``: the retrieved contexts without a generated answer;
- ``defences``: per-call overrides of ``config.defences`` (``DefencesConfig``).

**Defences** (``probeguard.pipeline.defences``; all off by default, and then nothing below
runs, the output carries no ``defences`` metadata and the fingerprint is the one of a config
without them). With ``d = config.defences`` merged with ``variation.defences``:

1. retrieval: ``d.query_expansion`` expands the query (retriever and re-ranker only);
   ``d.gate[backend]`` is the ``min_score`` of the backend in use (a call's own
   ``retrieval.min_score`` wins). When a defence re-orders or drops hits, ``max(2·top_k,
   rerank_candidates)`` candidates are fetched (and re-ranked) so that dropped hits are
   replaced;
2. on the hit list, in this order: trust tiers, archived-document demotion, near-duplicate
   suppression; then the list is cut to ``top_k``;
3. on the contexts: ``d.sanitise`` strips instruction-like sentences (the output's
   ``retrieved`` shows the sanitised text, as the generator saw it); ``d.spotlight`` wraps the
   prompt template (``prompts.spotlight``);
4. after generation: ``d.grounding == "refuse"`` refuses an ungrounded answer;
   ``d.conflict`` flags (or, ``refuse``, refuses over) number/date disagreements.

What the defences did is recorded in ``output.metadata["defences"]``: ``active`` (the
non-default settings) and, per defence that ran, ``gate`` ({backend, min_score}),
``expanded_query``, ``trust`` ({dropped, weights}), ``demoted`` ({doc id: reason}),
``deduplicated`` ([{chunk_id, duplicate_of}]), ``sanitised`` ([{chunk_id, removed,
phrases}]), ``grounding`` ({status, claims, unsupported}), ``conflicts`` ([...]), and, when a
defence replaced the answer with a refusal, ``refused_by`` and ``original_answer``.

**Indexes and locks.** An index is one chunking's chunks and, per retrieval mode, a retriever
over them. ``prepare(variations)`` builds the indexes those variations read (``index_key``):
the scan calls it before its runner starts, so no call builds one. Each index is built once
under its own lock (``build_once``): reading a built index takes no lock, and building one
never blocks calls or builds of another. An unprepared index is built on first use.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import ChainMap
from collections.abc import Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from probeguard._version import __version__
from probeguard.core.defences import DefencesConfig
from probeguard.core.documents import Chunk, Document, corpus_fingerprint
from probeguard.core.hashing import digest
from probeguard.core.pipeline import (
    ORACLE_DOC_ID,
    Capability,
    Context,
    PipelineOutput,
    RetrievedChunk,
    Usage,
    Variation,
    check_capabilities,
)
from probeguard.corpus.chunkers import make_chunker
from probeguard.corpus.chunking_base import Chunker
from probeguard.models.embedders.base import Embedder
from probeguard.models.embedders.factory import make_embedder
from probeguard.models.generators.base import Generation, Generator
from probeguard.models.generators.factory import make_generator
from probeguard.models.prompts import REFUSAL_TEXT, PromptTemplate, resolve_prompt, spotlight
from probeguard.pipeline.build_once import BuildOnce
from probeguard.pipeline.config import ReferencePipelineConfig
from probeguard.pipeline.defences.archive import demote_archived
from probeguard.pipeline.defences.conflict import conflicts, touches
from probeguard.pipeline.defences.dedupe import dedupe
from probeguard.pipeline.defences.expansion import expand_query
from probeguard.pipeline.defences.gate import gate_min_score
from probeguard.pipeline.defences.grounding import check_grounding
from probeguard.pipeline.defences.sanitise import sanitise_texts
from probeguard.pipeline.defences.trust import apply_trust
from probeguard.pipeline.rerankers import make_reranker
from probeguard.pipeline.retrievers.base import Hit, Retriever, SearchRequest
from probeguard.pipeline.retrievers.factory import make_retriever

log = logging.getLogger(__name__)

RETRIEVAL_MODES = ("dense", "bm25", "hybrid")
RETRIEVAL_OVERRIDES = frozenset({"mode", "top_k", "min_score", "filters", "rerank"})
"""The keys ``Variation.retrieval`` may hold for the reference pipeline."""


_DEFENCE_REPORT: ContextVar[dict[str, Any] | None] = ContextVar("defence_report", default=None)
"""The defence report of the ``answer`` call in progress (``retrieve`` adds to it)."""


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
    raise ValueError(
        f"unknown chunking '{name}': use 'document', 'sentences' or "
        "'tokens-SIZE-OVERLAP' (e.g. 'tokens-256-64')"
    )


def _rerank(opts: Mapping[str, Any]) -> bool:
    """Whether a call re-ranks: ``retrieval["rerank"]`` (a bool; default True)."""
    flag = opts.get("rerank", True)
    if not isinstance(flag, bool):
        raise ValueError(f"retrieval override 'rerank' must be true or false, got {flag!r}")
    return flag


def index_key(variation: Variation | None) -> tuple[str | None, str | None] | None:
    """The index a call with ``variation`` reads: ``(chunking, retrieval mode)`` (None: the
    configured one), or None when it reads no index (oracle contexts skip retrieval)."""
    if variation is None:
        return (None, None)
    if variation.contexts is not None:
        return None
    mode = variation.retrieval.get("mode")
    return (variation.chunking, None if mode is None else str(mode))


@dataclass(frozen=True)
class _Index:
    chunker: Chunker
    chunks: list[Chunk]


class ReferencePipeline:
    """Build once over a corpus, then ``answer`` questions (thread-safe)."""

    capabilities = frozenset(Capability)

    def __init__(
        self,
        documents: Sequence[Document],
        config: ReferencePipelineConfig | None = None,
        *,
        name: str = "reference",
    ) -> None:
        self.config = config or ReferencePipelineConfig()
        self.name = name
        self.documents = list(documents)
        self.corpus_fingerprint = corpus_fingerprint(self.documents)
        self._sources = {d.id: d.source for d in self.documents}
        self._embedder: BuildOnce[None, Embedder] = BuildOnce()
        self._indexes: BuildOnce[str, _Index] = BuildOnce()
        self._retrievers: BuildOnce[tuple[str, str], Retriever] = BuildOnce()
        self._generator: Generator = make_generator(self.config.generator)
        self._reranker = make_reranker(self.config.reranker)
        parts: dict[str, Any] = {
            "probeguard": __version__.split(".")[0],
            "corpus": self.corpus_fingerprint,
            "chunker": make_chunker(self.config.chunker).config(),
            "retriever": self.config.retriever,
            "embedder": self.config.embedder,
            "top_k": self.config.top_k,
            "rerank_candidates": self.config.rerank_candidates,
            "reranker": self._reranker.config() if self._reranker else None,
            "generator": self._generator.config(),
            "prompt": resolve_prompt(self.config.prompt).config(),
        }
        if not self.config.defences.is_off():
            # Only when some defence is on: configs without defences keep their old keys.
            parts["defences"] = self.config.defences.model_dump(mode="json")
        self._fingerprint = digest(parts)
        # Build (without indexing) the configured retriever and its embedder now, so that an
        # unknown name or parameter fails here, once, rather than in every case's first call.
        make_retriever(self._retriever_spec(None), embedder_factory=self._shared_embedder)

    # -- construction -------------------------------------------------------------------
    def fingerprint(self) -> str:
        return self._fingerprint

    def embedder(self) -> Embedder:
        return self._embedder.get(None, lambda: make_embedder(self.config.embedder))

    def _shared_embedder(self, spec: Mapping[str, Any]) -> Embedder:
        return self.embedder() if spec == self.config.embedder else make_embedder(spec)

    def _retriever_spec(self, mode: str | None, chunking: str | None = None) -> dict[str, Any]:
        spec = dict(self.config.retriever)
        if mode is not None and mode != spec.get("name"):
            if mode not in RETRIEVAL_MODES:
                raise ValueError(
                    f"unknown retrieval mode '{mode}' (known: {', '.join(RETRIEVAL_MODES)})"
                )
            spec = {"name": mode}
        if spec["name"] in ("dense", "hybrid", "chroma"):
            spec.setdefault("embedder", self.config.embedder)
        if spec["name"] == "chroma":
            # One collection per corpus: two scans of different corpora sharing the default
            # store path must not replace each other's index.
            spec.setdefault("collection", f"probeguard-{self.corpus_fingerprint[:16]}")
            if chunking:
                # Each chunking has its own index: a shared collection would be replaced by it.
                spec["collection"] = f"{spec['collection']}-{chunking}"
        return spec

    def _index(self, chunking: str | None) -> _Index:
        """The chunks of one chunking of the corpus, chunked once (under its own lock)."""

        def chunk() -> _Index:
            chunker = make_chunker(chunking_spec(chunking) if chunking else self.config.chunker)
            return _Index(chunker, chunker.chunk_all(self.documents))

        return self._indexes.get(chunking or "", chunk)

    def retriever(self, chunking: str | None = None, mode: str | None = None) -> Retriever:
        """The retriever for a chunking and mode, indexed once, under its own lock."""
        spec = self._retriever_spec(mode, chunking)

        def index() -> Retriever:
            retriever = make_retriever(spec, embedder_factory=self._shared_embedder)
            retriever.index(self._index(chunking).chunks)
            return retriever

        return self._retrievers.get((chunking or "", digest(spec)), index)

    def prepare(self, variations: Iterable[Variation | None] = (None,)) -> ReferencePipeline:
        """Build every index that calls with ``variations`` read (``index_key``; default: the
        configured one), in order of first appearance, so that no call has to (the scan before
        its runner starts; any worker process holding a pipeline). An index that fails to build
        is logged and left to the calls that read it: each records the error as its own."""
        keys = dict.fromkeys(k for k in map(index_key, variations) if k is not None)
        for chunking, mode in keys:
            try:
                self.retriever(chunking, mode)
            except Exception as exc:  # a call records it as its own error
                log.warning("index (%s, %s) not prepared: %s", chunking, mode, exc)
        return self

    def prepared(self, chunking: str | None = None, mode: str | None = None) -> bool:
        """Whether the index of ``chunking`` and ``mode`` is built."""
        spec = self._retriever_spec(mode, chunking)
        return self._retrievers.built((chunking or "", digest(spec)))

    @property
    def index_wait_s(self) -> float:
        """Seconds calls spent waiting on another call's build of the same index (or chunks,
        or embedder), summed: 0 when every index was prepared before the calls."""
        return self._embedder.wait_s + self._indexes.wait_s + self._retrievers.wait_s

    def build(self) -> ReferencePipeline:
        """Index the corpus now (otherwise it happens on the first question); raises what
        the build raises."""
        self.retriever()
        return self

    @property
    def chunks(self) -> list[Chunk]:
        return self._index(None).chunks

    # -- answering ----------------------------------------------------------------------
    def defences(self, variation: Variation | None = None) -> DefencesConfig:
        """The defences of a call: ``config.defences`` with ``variation.defences`` on top."""
        if variation is None or not variation.defences:
            return self.config.defences
        return self.config.defences.merged(variation.defences)

    def retrieve(self, question: str, variation: Variation | None = None) -> list[Hit]:
        """Retrieval (and re-ranking, and the retrieval-side defences) only, as ``answer``
        does it: ``answer`` calls this method, so a subclass that overrides it (e.g. to
        filter the overlay) changes what the generator sees. What the defences did is added
        to the report of the ``answer`` call in progress, if any."""
        variation = variation or Variation()
        report = _DEFENCE_REPORT.get()
        return self._retrieve(
            question, variation, self.defences(variation), report if report is not None else {}
        )

    def _retrieve(
        self, question: str, variation: Variation, defences: DefencesConfig, report: dict[str, Any]
    ) -> list[Hit]:
        opts = dict(variation.retrieval)
        unknown = set(opts) - RETRIEVAL_OVERRIDES
        if unknown:
            raise ValueError(f"unknown retrieval overrides: {', '.join(sorted(unknown))}")
        top_k = int(opts.get("top_k", self.config.top_k))
        if top_k < 1:
            raise ValueError(f"retrieval top_k must be at least 1, got {top_k}")
        retriever = self.retriever(variation.chunking, opts.get("mode"))
        index = self._index(variation.chunking)
        extra = index.chunker.chunk_all(variation.overlay) if variation.overlay else ()
        min_score = opts.get("min_score")
        if defences.gate:
            backend = str(opts.get("mode") or self.config.retriever.get("name"))
            min_score = gate_min_score(defences.gate, backend, min_score)
            report["gate"] = {"backend": backend, "min_score": min_score}
        query = question
        if defences.query_expansion:
            query = expand_query(question)
            report["expanded_query"] = query
        reranker = self._reranker if _rerank(opts) else None
        depth = max(2 * top_k, self.config.rerank_candidates) if defences.reorders() else top_k
        k = max(depth, self.config.rerank_candidates) if reranker else depth
        hits = retriever.search(
            SearchRequest(
                query=query,
                k=k,
                extra=extra,
                exclude_doc_ids=frozenset(variation.exclude_doc_ids),
                filters=opts.get("filters"),
                min_score=min_score,
            )
        )
        if reranker is not None:
            hits = reranker.rerank(query, hits, depth)
        if defences.reorders():
            hits = self._reorder(question, hits, variation, defences, report)
        return hits[:top_k]

    def _reorder(
        self,
        question: str,
        hits: list[Hit],
        variation: Variation,
        defences: DefencesConfig,
        report: dict[str, Any],
    ) -> list[Hit]:
        """Trust tiers, then archived-document demotion, then near-duplicate suppression."""
        if defences.trust_tiers or defences.default_trust != 1.0:
            # the corpus's sources, with the call's overlay on top (no per-call copy)
            sources = (
                ChainMap({d.id: d.source for d in variation.overlay}, self._sources)
                if variation.overlay
                else self._sources
            )
            hits, report["trust"] = apply_trust(
                hits, sources, defences.trust_tiers, defences.default_trust, defences.trust_field
            )
        if defences.demote_archived:
            hits, report["demoted"] = demote_archived(hits, question)
        if defences.dedupe:
            hits, report["deduplicated"] = dedupe(hits)
        return hits

    def _contexts(
        self, question: str, variation: Variation, defences: DefencesConfig, report: dict[str, Any]
    ) -> tuple[list[Context], list[RetrievedChunk]]:
        if variation.contexts is not None:
            contexts = [
                Context(chunk_id=f"{ORACLE_DOC_ID}#{i}", text=t)
                for i, t in enumerate(variation.contexts)
            ]
            retrieved = [
                RetrievedChunk(chunk_id=c.chunk_id, doc_id=ORACLE_DOC_ID, text=c.text, rank=i + 1)
                for i, c in enumerate(contexts)
            ]
        else:
            token = _DEFENCE_REPORT.set(report)
            try:
                hits = self.retrieve(question, variation)
            finally:
                _DEFENCE_REPORT.reset(token)
            contexts = [
                Context(chunk_id=h.chunk.id, text=h.chunk.text, title=h.chunk.title) for h in hits
            ]
            retrieved = [
                RetrievedChunk(
                    chunk_id=h.chunk.id,
                    doc_id=h.chunk.doc_id,
                    text=h.chunk.text,
                    rank=h.rank,
                    score=float(h.score),
                    title=h.chunk.title,
                    metadata=dict(h.chunk.metadata),
                )
                for h in hits
            ]
        if defences.sanitise and contexts:
            texts, records = sanitise_texts([c.text for c in contexts])
            for record in records:
                i = record.pop("index")
                contexts[i] = Context(contexts[i].chunk_id, texts[i], contexts[i].title)
                retrieved[i] = retrieved[i].model_copy(update={"text": texts[i]})
                record["chunk_id"] = contexts[i].chunk_id
            report["sanitised"] = records
        return contexts, retrieved

    def _prepare(
        self, question: str, variation: Variation | None
    ) -> tuple[
        Variation,
        DefencesConfig,
        dict[str, Any],
        list[Context],
        list[RetrievedChunk],
        PromptTemplate,
    ]:
        variation = variation or Variation()
        check_capabilities(self, variation)
        defences = self.defences(variation)
        report: dict[str, Any] = {}
        contexts, retrieved = self._contexts(question, variation, defences, report)
        prompt = resolve_prompt(variation.prompt or self.config.prompt)
        if defences.spotlight:
            prompt = spotlight(prompt)
        return variation, defences, report, contexts, retrieved, prompt

    @staticmethod
    def _check(
        gen: Generation,
        contexts: list[Context],
        retrieved: list[RetrievedChunk],
        defences: DefencesConfig,
        report: dict[str, Any],
    ) -> Generation:
        """The answer-side defences: grounding, then conflicts."""
        if gen.refused:
            return gen
        refused_by: list[str] = []
        if defences.grounding == "refuse":
            report["grounding"] = check_grounding(gen.text, contexts)
            if report["grounding"]["status"] == "ungrounded":
                refused_by.append("grounding")
        if defences.conflict != "off":
            report["conflicts"] = conflicts(retrieved)
            if defences.conflict == "refuse" and touches(report["conflicts"], gen.cited_chunk_ids):
                refused_by.append("conflict")
        if not refused_by:
            return gen
        report["refused_by"] = refused_by
        report["original_answer"] = gen.text
        return Generation(
            text=REFUSAL_TEXT, refused=True, usage=gen.usage, metadata=dict(gen.metadata)
        )

    def _output(
        self,
        gen: Generation,
        retrieved: list[RetrievedChunk],
        prompt_name: str,
        started: float,
        defences: DefencesConfig | None = None,
        report: dict[str, Any] | None = None,
    ) -> PipelineOutput:
        metadata = {"prompt": prompt_name, **gen.metadata}
        if defences is not None and not defences.is_off():
            metadata["defences"] = {"active": defences.active(), **(report or {})}
        return PipelineOutput(
            answer=gen.text,
            cited_chunk_ids=list(gen.cited_chunk_ids),
            retrieved=retrieved,
            refused=gen.refused,
            latency_s=round(time.perf_counter() - started, 6),
            usage=gen.usage if isinstance(gen.usage, Usage) else Usage(),
            metadata=metadata,
        )

    def answer(self, question: str, variation: Variation | None = None) -> PipelineOutput:
        started = time.perf_counter()
        variation, defences, report, contexts, retrieved, prompt = self._prepare(
            question, variation
        )
        if variation.retrieve_only:
            return self._output(Generation(text=""), retrieved, "none", started, defences, report)
        gen = self._generator.generate(question, contexts, prompt)
        gen = self._check(gen, contexts, retrieved, defences, report)
        return self._output(gen, retrieved, prompt.name, started, defences, report)

    async def aclose(self) -> None:
        """Close the generator's session of the running event loop (``Runner.run`` calls
        this before its loop ends; without it aiohttp warns "Unclosed client session")."""
        await self._generator.aclose()

    async def aanswer(self, question: str, variation: Variation | None = None) -> PipelineOutput:
        """Retrieval in a worker thread; a natively async generator is awaited."""
        agenerate = getattr(self._generator, "agenerate", None)
        if agenerate is None or (variation is not None and variation.retrieve_only):
            return await asyncio.to_thread(self.answer, question, variation)
        started = time.perf_counter()
        variation, defences, report, contexts, retrieved, prompt = await asyncio.to_thread(
            self._prepare, question, variation
        )
        gen = await agenerate(question, contexts, prompt)
        if defences.grounding != "off" or defences.conflict != "off":
            gen = await asyncio.to_thread(self._check, gen, contexts, retrieved, defences, report)
        return self._output(gen, retrieved, prompt.name, started, defences, report)

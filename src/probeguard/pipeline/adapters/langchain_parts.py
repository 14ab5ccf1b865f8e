"""The pieces the LangChain adapter is made of, and the bridges that let ProbeGuard's own
offline parts stand in as LangChain components (needs ``probeguard[langchain]``):

* ``ProbeGuardEmbeddings`` — any ProbeGuard ``Embedder`` (e.g. MiniLM ONNX) as a LangChain
  ``Embeddings``;
* ``GeneratorRunnable`` — any ProbeGuard ``Generator`` (e.g. the extractive one) as a LangChain
  ``Runnable`` over ``{"question", "context", "prompt"}``, the input the adapter hands to a
  generation step;
* ``chunk_documents`` — ProbeGuard documents chunked by a ProbeGuard chunker, as LangChain
  ``Document``s with ids (``id = chunk id``, ``metadata["doc_id"]``, ``metadata["title"]``);
* ``read_generation`` — a generation step's result (``str``, a message, or a dict with
  ``answer``) as a ``Generation``.

The LangChain names the adapter uses are imported here, once, so that a missing extra is a
``MissingExtraError`` with the install command.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from probeguard.core.documents import Document
from probeguard.core.errors import MissingExtraError, PipelineCallError
from probeguard.core.hashing import sha256_hex
from probeguard.core.pipeline import Context, RetrievedChunk
from probeguard.corpus.chunking_base import Chunker
from probeguard.models.embedders.base import Embedder
from probeguard.models.generators.base import Generation, Generator
from probeguard.models.prompts import looks_like_refusal, parse_citations, resolve_prompt

try:
    from langchain_core.documents import Document as LCDocument
    from langchain_core.embeddings import Embeddings
    from langchain_core.language_models import BaseChatModel, BaseLanguageModel, BaseLLM
    from langchain_core.messages import BaseMessage
    from langchain_core.runnables import Runnable, RunnableConfig
    from langchain_core.vectorstores import InMemoryVectorStore, VectorStore, VectorStoreRetriever
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("langchain", "langchain_core") from exc

__all__ = [
    "BaseChatModel",
    "BaseLLM",
    "BaseLanguageModel",
    "Embeddings",
    "GeneratorRunnable",
    "InMemoryVectorStore",
    "LCDocument",
    "Runnable",
    "VectorStore",
    "VectorStoreRetriever",
    "ProbeGuardEmbeddings",
    "chunk_documents",
    "context_of",
    "doc_id_of",
    "read_generation",
    "retrieved_of",
]

DOC_ID_KEYS = ("doc_id", "source", "document_id")
"""Metadata keys read, in this order, for the source document id of a LangChain document."""


class ProbeGuardEmbeddings(Embeddings):
    """A ProbeGuard ``Embedder`` as LangChain ``Embeddings`` (queries and documents share
    one encoder, as in the reference pipeline's dense retriever)."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[float(x) for x in row] for row in self.embedder.embed(texts)]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


class GeneratorRunnable(Runnable[dict[str, Any], dict[str, Any]]):
    """A ProbeGuard ``Generator`` as a LangChain ``Runnable``. Input: ``question``,
    ``context`` (LangChain documents, in rank order) and optionally ``prompt`` (a template
    name or text, ``models.prompts.resolve_prompt``). Output: ``{answer, cited_chunk_ids,
    refused, metadata}``. ``accepts_prompt`` tells the adapter it honours ``prompt``."""

    accepts_prompt = True

    def __init__(self, generator: Generator) -> None:
        self.generator = generator

    def invoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        prompt = resolve_prompt(input.get("prompt"))
        contexts = [context_of(d) for d in input["context"]]
        gen = self.generator.generate(str(input["question"]), contexts, prompt)
        return {
            "answer": gen.text,
            "cited_chunk_ids": list(gen.cited_chunk_ids),
            "refused": gen.refused,
            "metadata": {"prompt": prompt.name, **gen.metadata},
        }

    def config(self) -> dict[str, Any]:
        return {"generator": self.generator.config()}


def chunk_documents(documents: Sequence[Document], chunker: Chunker) -> list[LCDocument]:
    """Each chunk as a LangChain document: ``id`` = chunk id, the document's metadata plus
    ``doc_id`` and ``title``."""
    return [
        LCDocument(
            page_content=c.text,
            id=c.id,
            metadata={**dict(c.metadata), "doc_id": c.doc_id, "title": c.title},
        )
        for c in chunker.chunk_all(documents)
    ]


def doc_id_of(doc: LCDocument) -> str:
    """The source document id: the first of ``DOC_ID_KEYS`` in the metadata, else ``""``."""
    for key in DOC_ID_KEYS:
        value = doc.metadata.get(key)
        if value not in (None, ""):
            return str(value)
    return ""


def _chunk_id(doc: LCDocument) -> str:
    return str(doc.id) if doc.id else "ctx-" + sha256_hex(doc.page_content)[:12]


def context_of(doc: LCDocument) -> Context:
    """A LangChain document as a generator's context (``chunk_id`` = the document's id, or a
    content hash ``ctx-`` + sha256(text)[:12] when it has none)."""
    return Context(
        chunk_id=_chunk_id(doc), text=doc.page_content, title=str(doc.metadata.get("title") or "")
    )


def retrieved_of(doc: LCDocument, rank: int, score: float | None) -> RetrievedChunk:
    """A LangChain document as a retrieved chunk of the output (rank 1-based)."""
    metadata = {k: v for k, v in doc.metadata.items() if k not in ("doc_id", "title")}
    return RetrievedChunk(
        chunk_id=_chunk_id(doc),
        doc_id=doc_id_of(doc),
        text=doc.page_content,
        rank=rank,
        score=score,
        title=str(doc.metadata.get("title") or ""),
        metadata=metadata,
    )


def read_generation(value: Any, contexts: Sequence[Context], *, source: str) -> Generation:
    """A generation step's result as a ``Generation``. A dict gives ``answer`` and optionally
    ``cited_chunk_ids``, ``refused``, ``metadata``; a string or a message is the answer, its
    citations read from ``[n]`` markers (``parse_citations``) and a refusal from its wording
    (``looks_like_refusal``)."""
    if isinstance(value, dict):
        if "answer" not in value:
            raise PipelineCallError(
                f"{source}: the generation step returned a dict without 'answer' "
                f"(keys: {', '.join(sorted(map(str, value)))})"
            )
        text = "" if value["answer"] is None else _text(value["answer"], source)
        cited = value.get("cited_chunk_ids")
        return Generation(
            text=text,
            cited_chunk_ids=tuple(map(str, cited))
            if cited is not None
            else parse_citations(text, [c.chunk_id for c in contexts]),
            refused=bool(value.get("refused", looks_like_refusal(text))),
            metadata=dict(value.get("metadata") or {}),
        )
    text = _text(value, source)
    return Generation(
        text=text,
        cited_chunk_ids=parse_citations(text, [c.chunk_id for c in contexts]),
        refused=looks_like_refusal(text),
    )


def _text(value: Any, source: str) -> str:
    if isinstance(value, BaseMessage):
        value = value.content
    if isinstance(value, str):
        return value
    raise PipelineCallError(
        f"{source}: the generation step returned a {type(value).__name__}; expected a "
        f"string, a message or a dict with 'answer'"
    )

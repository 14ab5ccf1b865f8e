"""Retrieval from a persistent Chroma collection (extra ``chroma``).

We pass our own embeddings in, never Chroma's default embedding function (it downloads a
model): the collection is created with ``embedding_function=None`` and cosine space, and the
same ``Embedder`` embeds chunks, queries and overlay chunks (a fitting embedder is copied
before it is fitted, as in ``DenseRetriever``). Scores are cosine similarities
(``1 − cosine distance``), so they share the dense retriever's scale; Chroma's HNSW search is
approximate.

Masks and filters become a ``where`` clause (``doc_id $nin``, ``key $in``); overlay chunks are
scored in memory against the query embedding and merged, as in ``DenseRetriever``. Chroma
metadata holds scalars only: a non-scalar metadata value is stored as its canonical JSON text,
so filters on list-valued keys (which ``filters.matches`` supports) do not match in Chroma.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from probeguard.core.documents import Chunk
from probeguard.core.errors import MissingExtraError
from probeguard.core.hashing import canonical_json
from probeguard.models.embedders.base import Embedder
from probeguard.pipeline.retrievers.base import Hit, Retriever, SearchRequest
from probeguard.pipeline.retrievers.dense import fitted_copy
from probeguard.pipeline.retrievers.filters import (
    hits_from,
    merge_ranked,
    normalize_filters,
    overlay_visible,
)

_RESERVED = ("doc_id", "chunk_index")
_BATCH = 1024


def _import_chromadb() -> Any:
    try:
        import chromadb
    except ImportError as exc:
        raise MissingExtraError("chroma", "chromadb") from exc
    return chromadb


def chroma_metadata(chunk: Chunk) -> dict[str, str | int | float | bool]:
    """Scalar metadata for Chroma: the chunk's own (non-scalars as canonical JSON) plus
    ``doc_id`` and ``chunk_index``, which masks use."""
    meta: dict[str, str | int | float | bool] = {}
    for key, value in chunk.metadata.items():
        if key in _RESERVED or value is None:
            continue
        meta[key] = value if isinstance(value, (str, int, float, bool)) else canonical_json(value)
    meta["doc_id"] = chunk.doc_id
    meta["chunk_index"] = chunk.index
    return meta


def where_clause(
    exclude_doc_ids: frozenset[str], filters: dict[str, tuple[Any, ...]]
) -> dict[str, Any] | None:
    """A Chroma ``where`` filter equivalent to the mask and (scalar) filters."""
    clauses: list[dict[str, Any]] = []
    if exclude_doc_ids:
        clauses.append({"doc_id": {"$nin": sorted(exclude_doc_ids)}})
    for key, accepted in filters.items():
        clauses.append(
            {key: {"$in": list(accepted)}} if len(accepted) > 1 else {key: {"$eq": accepted[0]}}
        )
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


class ChromaRetriever(Retriever):
    """Chunks in ``chromadb.PersistentClient(path).collection``; ``index`` replaces the
    collection. ``client`` may be given (any Chroma client, e.g. an ``EphemeralClient``);
    otherwise a ``PersistentClient(path)`` is opened on first use."""

    name = "chroma"

    def __init__(
        self,
        embedder: Embedder,
        path: str = ".probeguard/chroma",
        collection: str = "probeguard",
        min_score: float | None = None,
        client: Any = None,
    ) -> None:
        self.embedder = embedder
        self._source = embedder
        self.path = path
        self.collection_name = collection
        self.min_score = min_score
        self._client = client
        self._collection: Any = None
        self._chunks: list[Chunk] = []
        self._by_id: dict[str, int] = {}

    def _get_client(self) -> Any:
        if self._client is None:
            chromadb = _import_chromadb()
            self._client = chromadb.PersistentClient(path=self.path)
        return self._client

    def index(self, chunks: Sequence[Chunk]) -> None:
        client = self._get_client()
        chunks = list(chunks)
        try:
            client.delete_collection(self.collection_name)
        except Exception:
            pass
        collection = client.create_collection(
            name=self.collection_name, embedding_function=None, metadata={"hnsw:space": "cosine"}
        )
        texts = [c.text for c in chunks]
        self.embedder = fitted_copy(self._source, texts)
        for start in range(0, len(chunks), _BATCH):
            part = chunks[start : start + _BATCH]
            vectors = self.embedder.embed([c.text for c in part])
            collection.add(
                ids=[c.id for c in part],
                embeddings=vectors.tolist(),
                documents=[c.text for c in part],
                metadatas=[chroma_metadata(c) for c in part],
            )
        self._collection = collection
        self._chunks = chunks
        self._by_id = {}
        for i, c in enumerate(chunks):
            self._by_id.setdefault(c.id, i)

    def search(self, request: SearchRequest) -> list[Hit]:
        if self._collection is None:
            raise RuntimeError("ChromaRetriever: call index() before search()")
        if request.k <= 0:
            return []
        exclude = frozenset(request.exclude_doc_ids)
        filters = normalize_filters(request.filters)
        overlay = overlay_visible(request.extra, exclude, filters)
        min_score = request.min_score if request.min_score is not None else self.min_score
        shadowed = {c.id for c in request.extra} & self._by_id.keys()
        query = self.embedder.embed([request.query])[0]
        candidates: list[tuple[float, int, Chunk]] = []
        n_results = min(request.k + len(shadowed), len(self._chunks))
        if n_results:
            where = where_clause(exclude, filters)
            result = self._collection.query(
                query_embeddings=[query.tolist()],
                n_results=n_results,
                where=where,
                include=["distances"],
            )
            for cid, distance in zip(result["ids"][0], result["distances"][0]):
                if cid in shadowed:
                    continue
                i = self._by_id[cid]
                candidates.append((1.0 - float(distance), i, self._chunks[i]))
        if overlay:
            extra = [request.extra[j] for j in overlay]
            scores = self.embedder.embed([c.text for c in extra]) @ query
            n = len(self._chunks)
            for j, s, c in zip(overlay, np.asarray(scores), extra):
                candidates.append((float(s), n + j, c))
        return hits_from(merge_ranked(candidates, request.k, min_score))

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "embedder": self.embedder.config(),
            "collection": self.collection_name,
            "space": "cosine",
            "min_score": self.min_score,
        }

"""Exact dense retrieval: cosine similarity (dot product of unit rows) over an in-memory
``(N, dim)`` float32 matrix.

Search is one matrix-vector product, an O(N) ``np.argpartition`` for the top k and a sort of
those k (see ``filters.top_k_indices``); recall is 1 by construction. Masks and filters set
scores to ``-inf`` through a boolean array, never touching the matrix. Overlay chunks are
embedded by the same (already fitted) embedder — so a fitting embedder such as hashed TF-IDF
scores them under the main corpus's frozen idf — scored as a small separate matrix and merged
with the main top k. Embedders from ``make_embedder`` that learn nothing from a corpus (MiniLM,
sentence-transformers) come memoised (``CachedEmbedder``): a repeated overlay chunk, such as
an injected document re-used by a probe's cases and re-runs, is embedded once per process (and
once per embedding cache folder across runs).

A fitting embedder (one that overrides ``Embedder.fit``, e.g. hashed TF-IDF) is shallow-copied
before it is fitted, so one embedder instance can serve several indexes (chunkings) without
a later ``index()`` changing an earlier index's statistics; ``retriever.embedder`` is the
fitted copy. (``fit`` implementations rebind their statistics rather than mutate them.)
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from probeguard.core.documents import Chunk
from probeguard.models.embedders.base import Embedder
from probeguard.pipeline.retrievers.base import Hit, Retriever, SearchRequest
from probeguard.pipeline.retrievers.filters import (
    ChunkMask,
    hits_from,
    merge_ranked,
    top_k_indices,
    visibility,
)


def fitted_copy(embedder: Embedder, texts: Sequence[str]) -> Embedder:
    """``embedder`` itself when it learns nothing from a corpus; otherwise a shallow copy of
    it fitted on ``texts`` (the original is left as it was)."""
    if type(embedder).fit is Embedder.fit:
        return embedder
    fitted = copy.copy(embedder)
    fitted.fit(texts)
    return fitted


class DenseRetriever(Retriever):
    """Exact cosine search; ``min_score`` (cosine) is the default gate for requests that set
    none."""

    name = "dense"

    def __init__(self, embedder: Embedder, min_score: float | None = None) -> None:
        self.embedder = embedder
        self._source = embedder
        self.min_score = min_score
        self._chunks: list[Chunk] = []
        self._matrix: np.ndarray | None = None
        self._mask: ChunkMask | None = None

    def index(self, chunks: Sequence[Chunk]) -> None:
        chunks = list(chunks)
        texts = [c.text for c in chunks]
        self.embedder = fitted_copy(self._source, texts)
        matrix = self.embedder.embed(texts) if texts else None
        if matrix is None:
            matrix = np.zeros((0, max(int(self.embedder.dim), 1)), dtype=np.float32)
        self._matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        self._chunks = chunks
        self._mask = ChunkMask(chunks)

    @property
    def matrix(self) -> np.ndarray:
        """The indexed ``(N, dim)`` float32 embeddings (read-only by convention)."""
        if self._matrix is None:
            raise RuntimeError("DenseRetriever: call index() before search()")
        return self._matrix

    def search(self, request: SearchRequest) -> list[Hit]:
        matrix = self.matrix
        assert self._mask is not None
        if request.k <= 0:
            return []
        vis = visibility(request, self._mask, self.min_score)
        query = self.embedder.embed([request.query])[0]
        candidates: list[tuple[float, int, Chunk]] = []
        if matrix.shape[0]:
            scores = matrix @ query
            if vis.allowed is not None:
                scores[~vis.allowed] = -np.inf
            for i in top_k_indices(scores, request.k):
                candidates.append((float(scores[i]), int(i), self._chunks[i]))
        if vis.overlay:
            extra = [request.extra[i] for i in vis.overlay]
            extra_scores = self.embedder.embed([c.text for c in extra]) @ query
            n = len(self._chunks)
            for j, (s, c) in zip(vis.overlay, zip(extra_scores, extra)):
                candidates.append((float(s), n + j, c))
        return hits_from(merge_ranked(candidates, request.k, vis.min_score))

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "embedder": self.embedder.config(), "min_score": self.min_score}

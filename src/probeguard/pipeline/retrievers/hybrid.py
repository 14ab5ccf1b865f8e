"""Hybrid retrieval: dense and BM25 fused by reciprocal rank fusion (Cormack, Clarke &
Büttcher 2009, "Reciprocal rank fusion outperforms Condorcet and individual rank learning
methods"):

    RRF(c) = Σ_{r ∈ retrievers that returned c} 1 / (rrf_k + rank_r(c))

over each retriever's top ``candidates``, summed dense first then BM25 (a fixed order, so
scores are reproducible to the bit). Ties are broken by chunk order.

Scale warning: a fused score is at most ``2 / (rrf_k + 1)`` (≈ 0.033 for rrf_k = 60), so a
``min_score`` calibrated for cosine or BM25 would drop every hit. The fused gate is this
retriever's own ``min_score`` (or the request's); the components keep their own gates, which
apply to their candidate lists before fusion (the request's ``min_score`` is not passed down).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from probeguard.core.documents import Chunk
from probeguard.pipeline.retrievers.base import Hit, Retriever, SearchRequest
from probeguard.pipeline.retrievers.filters import hits_from, merge_ranked


class HybridRetriever(Retriever):
    """RRF over a dense and a BM25 retriever; ``index`` indexes both; ``search`` passes the
    overlay, mask and filters down to both."""

    name = "hybrid"

    def __init__(
        self,
        dense: Retriever,
        bm25: Retriever,
        rrf_k: int = 60,
        candidates: int = 50,
        min_score: float | None = None,
    ) -> None:
        if rrf_k < 0 or candidates < 1:
            raise ValueError(f"need rrf_k >= 0 and candidates >= 1, got {rrf_k}, {candidates}")
        self.dense = dense
        self.bm25 = bm25
        self.rrf_k = int(rrf_k)
        self.candidates = int(candidates)
        self.min_score = min_score
        self._position: dict[str, int] = {}
        self._n = 0

    def index(self, chunks: Sequence[Chunk]) -> None:
        chunks = list(chunks)
        self.dense.index(chunks)
        self.bm25.index(chunks)
        self._position = {}
        for i, c in enumerate(chunks):
            self._position.setdefault(c.id, i)
        self._n = len(chunks)

    def search(self, request: SearchRequest) -> list[Hit]:
        if request.k <= 0:
            return []
        sub = SearchRequest(
            query=request.query,
            k=max(self.candidates, request.k),
            extra=request.extra,
            exclude_doc_ids=request.exclude_doc_ids,
            filters=request.filters,
            min_score=None,
        )
        overlay_pos = {c.id: self._n + j for j, c in enumerate(request.extra)}
        fused: dict[str, float] = {}
        chunk_of: dict[str, Chunk] = {}
        for retriever in (self.dense, self.bm25):
            for hit in retriever.search(sub):
                cid = hit.chunk.id
                fused[cid] = fused.get(cid, 0.0) + 1.0 / (self.rrf_k + hit.rank)
                chunk_of.setdefault(cid, hit.chunk)
        candidates = []
        for cid, score in fused.items():
            position = overlay_pos.get(cid, self._position.get(cid, self._n + len(overlay_pos)))
            candidates.append((score, position, chunk_of[cid]))
        min_score = request.min_score if request.min_score is not None else self.min_score
        return hits_from(merge_ranked(candidates, request.k, min_score))

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "rrf_k": self.rrf_k,
            "candidates": self.candidates,
            "min_score": self.min_score,
            "dense": self.dense.config(),
            "bm25": self.bm25.config(),
        }

"""The re-ranker interface: re-score a retriever's hits for a query and keep the best."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from probeguard.pipeline.retrievers.base import Hit


class Reranker(ABC):
    """Re-scores hits. ``rerank`` returns at most ``top_n`` hits (all when ``None``), best
    first, with the re-ranker's scores and new ranks 1..n; ties keep the incoming order.
    Must be thread-safe (pipelines are called from worker threads)."""

    name: str = ""

    def rerank(self, query: str, hits: Sequence[Hit], top_n: int | None = None) -> list[Hit]:
        hits = sorted(hits, key=lambda h: h.rank)
        if not hits:
            return []
        scores = [float(s) for s in self.score(query, hits)]
        if len(scores) != len(hits):
            raise RuntimeError(f"{self.name}: {len(scores)} scores for {len(hits)} hits")
        order = sorted(range(len(hits)), key=lambda i: (-scores[i], i))
        if top_n is not None:
            order = order[: max(top_n, 0)]
        return [Hit(chunk=hits[i].chunk, score=scores[i], rank=r) for r, i in enumerate(order, 1)]

    @abstractmethod
    def score(self, query: str, hits: Sequence[Hit]) -> Sequence[float]:
        """One relevance score per hit (higher is better), in the order given."""

    @abstractmethod
    def config(self) -> dict[str, Any]:
        """Canonical settings, part of the pipeline fingerprint."""

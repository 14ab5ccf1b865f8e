"""Build a retriever from a config dict:

    {"name": "dense", "embedder": {"name": "minilm"}, "min_score": 0.3}
    {"name": "bm25", "k1": 1.5, "b": 0.75, "method": "lucene", "stopwords": "en"}
    {"name": "hybrid", "dense": {...}, "bm25": {...}, "rrf_k": 60, "candidates": 50}
    {"name": "chroma", "embedder": {...}, "path": "...", "collection": "..."}

A hybrid spec without ``dense`` / ``bm25`` uses a dense retriever over its ``embedder`` (or
MiniLM) and a default BM25. ``ValueError`` for an unknown name or parameter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from probeguard.core.plugins import construct, load_class
from probeguard.models.embedders.base import Embedder
from probeguard.models.embedders.factory import make_embedder
from probeguard.pipeline.retrievers.base import Retriever

RETRIEVERS: dict[str, tuple[str, str]] = {
    "dense": ("probeguard.pipeline.retrievers.dense", "DenseRetriever"),
    "bm25": ("probeguard.pipeline.retrievers.bm25", "BM25Retriever"),
    "hybrid": ("probeguard.pipeline.retrievers.hybrid", "HybridRetriever"),
    "chroma": ("probeguard.pipeline.retrievers.chroma", "ChromaRetriever"),
}
DEFAULT_EMBEDDER: dict[str, Any] = {"name": "minilm"}


def make_retriever(
    spec: Mapping[str, Any],
    embedder_factory: Callable[[Mapping[str, Any]], Embedder] = make_embedder,
) -> Retriever:
    """A retriever from ``{"name": ..., **params}`` (see the module docstring)."""
    params = dict(spec)
    name = params.pop("name", None)
    cls = load_class(RETRIEVERS, "retriever", name)
    if name in ("dense", "chroma"):
        params["embedder"] = embedder_factory(params.get("embedder") or DEFAULT_EMBEDDER)
    elif name == "hybrid":
        embedder_spec = params.pop("embedder", None) or DEFAULT_EMBEDDER
        dense_spec = dict(params.pop("dense", None) or {"embedder": embedder_spec})
        dense_spec.setdefault("name", "dense")
        bm25_spec = dict(params.pop("bm25", None) or {})
        bm25_spec.setdefault("name", "bm25")
        params["dense"] = make_retriever(dense_spec, embedder_factory)
        params["bm25"] = make_retriever(bm25_spec, embedder_factory)
    return construct(cls, "retriever", name, params)

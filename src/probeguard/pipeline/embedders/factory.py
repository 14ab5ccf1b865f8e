"""Build an embedder from a config dict: ``{"name": "hashing" | "minilm" |
"sentence-transformers", ...constructor parameters}`` (see ``probeguard.plugins``)."""

from __future__ import annotations

from typing import Any, Mapping

from probeguard.pipeline.embedders.base import Embedder
from probeguard.plugins import build

EMBEDDERS: dict[str, tuple[str, str]] = {
    "hashing": ("probeguard.pipeline.embedders.hashing", "HashingTfidfEmbedder"),
    "minilm": ("probeguard.pipeline.embedders.minilm", "MiniLMOnnxEmbedder"),
    "sentence-transformers": ("probeguard.pipeline.embedders.sentence_transformers",
                              "SentenceTransformerEmbedder"),
}


def make_embedder(spec: Mapping[str, Any]) -> Embedder:
    """An embedder from ``{"name": ..., **params}``."""
    embedder: Embedder = build(EMBEDDERS, "embedder", spec)
    return embedder

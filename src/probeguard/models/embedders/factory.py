"""Build an embedder from a config dict: ``{"name": "hashing" | "minilm" |
"sentence-transformers", ...constructor parameters}`` (see ``probeguard.core.plugins``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from probeguard.core.plugins import build
from probeguard.models.embedders.base import Embedder

EMBEDDERS: dict[str, tuple[str, str]] = {
    "hashing": ("probeguard.models.embedders.hashing", "HashingTfidfEmbedder"),
    "minilm": ("probeguard.models.embedders.minilm", "MiniLMOnnxEmbedder"),
    "sentence-transformers": (
        "probeguard.models.embedders.sentence_transformers",
        "SentenceTransformerEmbedder",
    ),
}


def make_embedder(spec: Mapping[str, Any]) -> Embedder:
    """An embedder from ``{"name": ..., **params}``."""
    embedder: Embedder = build(EMBEDDERS, "embedder", spec)
    return embedder

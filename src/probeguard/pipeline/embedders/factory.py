"""Build an embedder from a config dict: ``{"name": "hashing" | "minilm" |
"sentence-transformers", ...constructor parameters}``. Modules load only when named, so a
missing extra costs nothing until it is asked for."""

from __future__ import annotations

import importlib
import inspect
from typing import Any, Mapping

from probeguard.pipeline.embedders.base import Embedder

EMBEDDERS: dict[str, tuple[str, str]] = {
    "hashing": ("probeguard.pipeline.embedders.hashing", "HashingTfidfEmbedder"),
    "minilm": ("probeguard.pipeline.embedders.minilm", "MiniLMOnnxEmbedder"),
    "sentence-transformers": ("probeguard.pipeline.embedders.sentence_transformers",
                              "SentenceTransformerEmbedder"),
}


def load_class(registry: Mapping[str, tuple[str, str]], kind: str, name: Any) -> type:
    """The class registered as ``name``; ``ValueError`` listing the known names."""
    if name not in registry:
        raise ValueError(f"unknown {kind} {name!r}; known: {sorted(registry)}")
    module, attr = registry[name]
    return getattr(importlib.import_module(module), attr)


def construct(cls: type, kind: str, name: str, params: Mapping[str, Any]) -> Any:
    """``cls(**params)``, with a ``ValueError`` naming unknown parameters and the accepted
    ones instead of a bare ``TypeError``."""
    accepted = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ValueError(f"{kind} '{name}': unknown parameter(s) {unknown}; "
                         f"accepted: {accepted}")
    return cls(**params)


def make_embedder(spec: Mapping[str, Any]) -> Embedder:
    """An embedder from ``{"name": ..., **params}``; ``ValueError`` for an unknown name
    (listing the known ones) or an unknown parameter (listing the accepted ones)."""
    params = dict(spec)
    name = params.pop("name", None)
    cls = load_class(EMBEDDERS, "embedder", name)
    return construct(cls, "embedder", name, params)

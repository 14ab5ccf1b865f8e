"""Re-rankers: re-score a retriever's hits. ``make_reranker`` builds one from a config dict
(``{"name": "lexical" | "cross-encoder", ...}``); ``None`` or ``{"name": "none"}`` means
no re-ranking."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from probeguard.core.plugins import construct, load_class
from probeguard.pipeline.rerankers.base import Reranker

RERANKERS: dict[str, tuple[str, str]] = {
    "lexical": ("probeguard.pipeline.rerankers.lexical", "LexicalReranker"),
    "cross-encoder": ("probeguard.pipeline.rerankers.cross_encoder", "CrossEncoderReranker"),
}


def make_reranker(spec: Mapping[str, Any] | None) -> Reranker | None:
    """A re-ranker from ``{"name": ..., **params}``, or ``None`` for no re-ranking;
    ``ValueError`` for an unknown name or parameter."""
    if spec is None:
        return None
    params = dict(spec)
    name = params.pop("name", None)
    if name in (None, "none"):
        if params:
            raise ValueError(f"reranker 'none' takes no parameters, got {sorted(params)}")
        return None
    cls = load_class(RERANKERS, "reranker", name)
    return construct(cls, "reranker", name, params)


__all__ = ["Reranker", "RERANKERS", "make_reranker"]

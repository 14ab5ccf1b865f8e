"""What the framework adapters (LangChain, LlamaIndex) share: reading a call's retrieval
overrides, and merging scored hits from a main index and a call's own overlay index."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

from probeguard.core.errors import UnsupportedCapabilityError
from probeguard.core.hashing import digest
from probeguard.core.pipeline import Variation
from probeguard.models.prompts import resolve_prompt

__all__ = ["RETRIEVAL_KEYS", "adapter_fingerprint", "rank_hits", "retrieval_options"]

T = TypeVar("T")

RETRIEVAL_KEYS = frozenset({"top_k", "min_score", "mode"})
"""The ``retrieval`` overrides a framework adapter understands."""


def retrieval_options(
    variation: Variation, *, default_k: int, mode: str, pipeline: str
) -> tuple[int, float | None]:
    """``(top_k, min_score)`` of a call. ``mode`` may only name the store's own search
    (another is an ``UnsupportedCapabilityError``: the swap that asks for it is reported
    unsupported, not faked); an unknown key or ``top_k < 1`` is a ``ValueError``."""
    opts = dict(variation.retrieval)
    unknown = set(opts) - RETRIEVAL_KEYS
    if unknown:
        raise ValueError(f"unknown retrieval overrides: {', '.join(sorted(unknown))}")
    asked = opts.get("mode")
    if asked is not None and asked != mode:
        raise UnsupportedCapabilityError(pipeline, {f"retrieval.mode={asked}"})
    top_k = int(opts.get("top_k", default_k))
    if top_k < 1:
        raise ValueError(f"retrieval top_k must be at least 1, got {top_k}")
    min_score = opts.get("min_score")
    return top_k, None if min_score is None else float(min_score)


def rank_hits(
    hits: Iterable[tuple[T, float, int]], k: int, min_score: float | None
) -> list[tuple[T, float]]:
    """``(item, score, position)`` hits, best score first; ties go to the lower position
    (the earlier-added item, main index before overlay), as in the reference pipeline's
    dense retriever. Hits under ``min_score`` are dropped; the first ``k`` kept."""
    ranked = sorted(hits, key=lambda h: (-h[1], h[2]))
    return [(item, score) for item, score, _ in ranked if min_score is None or score >= min_score][
        :k
    ]


def adapter_fingerprint(
    adapter: str,
    parts: dict[str, Any],
    embeddings: tuple[str, Any],
    generate: Any,
    *,
    k: int,
    prompt: Any,
    overlay_mode: str,
    version: str,
) -> str:
    """A framework adapter's fingerprint: what it wraps (``parts``: corpus, chunker), its
    embeddings object (``(key, object)``; the ProbeGuard embedder's config when it wraps one),
    the generation step (its ``config()`` when it has one), ``k``, the prompt, the overlay mode
    and the adapter's version."""
    key, model = embeddings
    embedder = getattr(model, "embedder", None)
    gen_config = getattr(generate, "config", None)
    return digest(
        {
            "adapter": adapter,
            **parts,
            key: type(model).__name__,
            "embedder": embedder.config() if embedder is not None else None,
            "k": k,
            "generate": type(generate).__name__,
            "generate_config": gen_config() if callable(gen_config) else None,
            "prompt": resolve_prompt(prompt).config(),
            "overlay_mode": overlay_mode,
            "version": version,
        }
    )

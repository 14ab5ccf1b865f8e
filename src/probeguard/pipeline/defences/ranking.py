"""Shared by the retrieval-side defences: hits renumbered after a re-ordering."""

from __future__ import annotations

from collections.abc import Sequence

from probeguard.pipeline.retrievers.base import Hit

__all__ = ["renumber"]


def renumber(hits: Sequence[Hit]) -> list[Hit]:
    """The hits in the given order with ranks 1..n; scores stay the retriever's own."""
    return [h if h.rank == i else Hit(h.chunk, h.score, i) for i, h in enumerate(hits, start=1)]

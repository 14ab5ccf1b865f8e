"""The retriever interface: index chunks once, then search with per-call overlay, mask and
metadata filters."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from probeguard.core.documents import Chunk


@dataclass(frozen=True, slots=True)
class Hit:
    """A retrieved chunk, its score under the retriever's scale and its 1-based rank."""

    chunk: Chunk
    score: float
    rank: int


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """One search.

    ``extra`` are overlay chunks: scored against the index's *frozen* statistics (BM25 idf
    and average length; dense: their own small matrix) and merged into the top-k, so a
    poisoned query costs O(len(extra)), not a re-index. ``exclude_doc_ids`` masks documents.
    ``filters`` keep only chunks whose metadata matches every key (a value, or a list of
    accepted values). ``min_score`` drops hits scoring below it (None: the retriever's own).
    """

    query: str
    k: int
    extra: Sequence[Chunk] = ()
    exclude_doc_ids: frozenset[str] = frozenset()
    filters: Mapping[str, Any] | None = None
    min_score: float | None = None


class Retriever(ABC):
    name: str = ""

    @abstractmethod
    def index(self, chunks: Sequence[Chunk]) -> None:
        """Build the index over ``chunks`` (replacing any earlier one)."""

    @abstractmethod
    def search(self, request: SearchRequest) -> list[Hit]:
        """Top ``request.k`` hits, best first, ranks 1..n; ties broken by chunk order."""

    @abstractmethod
    def config(self) -> dict[str, Any]:
        """Canonical settings, part of the pipeline fingerprint."""

"""The chunker interface. Implementations live in ``probeguard.corpus.chunkers``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

from probeguard.core.documents import Chunk, Document


class Chunker(ABC):
    """Splits a document into chunks whose ``text == doc.text[start:end]``.

    Contract (checked by property tests): chunks are ordered by ``start``; together they
    cover every non-whitespace character of the document; ``index`` counts from 0.
    """

    name: str = ""

    @abstractmethod
    def chunk(self, doc: Document) -> list[Chunk]: ...

    def chunk_all(self, docs: Iterable[Document]) -> list[Chunk]:
        return [c for d in docs for c in self.chunk(d)]

    @abstractmethod
    def config(self) -> dict[str, Any]:
        """Canonical settings, part of the pipeline fingerprint: ``{"name": ..., ...}``."""

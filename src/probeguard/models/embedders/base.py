"""The embedder interface."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np


class Embedder(ABC):
    """Maps texts to L2-normalised float32 row vectors (cosine = dot product)."""

    name: str = ""
    dim: int = 0

    def fit(self, texts: Sequence[str]) -> None:  # noqa: B027 (optional hook, not abstract)
        """Learn corpus statistics (e.g. idf) from the indexed texts; most embedders
        need none. Called once, before the corpus is embedded."""

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Shape ``(len(texts), dim)``, dtype float32, rows of unit norm (or zero)."""

    @abstractmethod
    def config(self) -> dict[str, Any]:
        """Canonical settings, part of the pipeline fingerprint."""

    def cache_id(self) -> str | None:
        """The model part of an on-disk embedding cache key: a digest of everything that
        decides a text's vector (settings, and the model files' hash or the model's
        version), or ``None`` (the default) when vectors must not be cached on disk."""
        return None

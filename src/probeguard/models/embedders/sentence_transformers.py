"""Embeddings from any sentence-transformers model (the production path for users with the
Hugging Face hub; the default, BAAI/bge-base-en-v1.5, is downloaded on first use).

Rows are L2-normalised by sentence-transformers itself (``normalize_embeddings=True``).
Needs the ``sentence-transformers`` extra (and torch); nothing is imported until first use.
"""

from __future__ import annotations

import importlib.metadata
import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from probeguard.core.errors import MissingExtraError
from probeguard.core.hashing import digest
from probeguard.models.embedders.base import Embedder


def _import_sentence_transformer() -> Any:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise MissingExtraError("sentence-transformers", "sentence_transformers") from exc
    return SentenceTransformer


class SentenceTransformerEmbedder(Embedder):
    """``SentenceTransformer(model_name, device=device).encode(..., normalize_embeddings=True)``.
    Queries and passages are embedded alike (no instruction prefix), as with the other
    embedders."""

    name = "sentence-transformers"

    def __init__(
        self, model_name: str = "BAAI/bge-base-en-v1.5", device: str = "cpu", batch_size: int = 32
    ) -> None:
        self.model_name = model_name
        self.device = device
        self.batch_size = int(batch_size)
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    cls = _import_sentence_transformer()
                    self._model = cls(self.model_name, device=self.device)
        return self._model

    @property
    def dim(self) -> int:  # type: ignore[override]  # read-only here: known once loaded
        """The model's output dimension (loads the model)."""
        return int(self._load().get_sentence_embedding_dimension())

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        model = self._load()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "model": self.model_name, "normalize": True}

    def cache_id(self) -> str | None:
        """``config()`` with the installed sentence-transformers version and, for a model in
        a local folder, the size and modification time of each of its files. A hub model is
        keyed by its name: clear the cache after changing the revision it resolves to."""
        try:
            version = importlib.metadata.version("sentence-transformers")
        except importlib.metadata.PackageNotFoundError:
            return None
        record: dict[str, Any] = {**self.config(), "sentence_transformers": version}
        if os.path.isdir(self.model_name):
            record["files"] = sorted(
                [
                    os.path.relpath(os.path.join(root, f), self.model_name),
                    st.st_size,
                    st.st_mtime_ns,
                ]
                for root, _, files in os.walk(self.model_name)
                for f in files
                for st in [os.stat(os.path.join(root, f))]
            )
        return digest(record)

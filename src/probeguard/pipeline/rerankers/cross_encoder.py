"""A cross-encoder re-ranker via ``sentence_transformers.CrossEncoder`` (extra
``sentence-transformers``); the default model, cross-encoder/ms-marco-MiniLM-L-6-v2 (trained
on MS MARCO passage ranking), is downloaded from the Hugging Face hub on first use. Scores are
the model's raw relevance logits."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from probeguard.core.errors import MissingExtraError
from probeguard.pipeline.rerankers.base import Reranker
from probeguard.pipeline.retrievers.base import Hit


class CrossEncoderReranker(Reranker):
    """Scores each (query, chunk text) pair jointly with a cross-encoder."""

    name = "cross-encoder"

    def __init__(
        self,
        model_name: str = "cross-encoder/ms-marco-MiniLM-L-6-v2",
        device: str = "cpu",
        batch_size: int = 32,
        max_length: int = 512,
    ) -> None:
        self.model_name = model_name
        self.device = device
        self.batch_size = int(batch_size)
        self.max_length = int(max_length)
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    try:
                        from sentence_transformers import CrossEncoder
                    except ImportError as exc:
                        raise MissingExtraError(
                            "sentence-transformers", "sentence_transformers"
                        ) from exc
                    self._model = CrossEncoder(
                        self.model_name, device=self.device, max_length=self.max_length
                    )
        return self._model

    def score(self, query: str, hits: Sequence[Hit]) -> Sequence[float]:
        model = self._load()
        pairs = [(query, h.chunk.text) for h in hits]
        scores = model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False)
        return [float(s) for s in scores]

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "model": self.model_name, "max_length": self.max_length}

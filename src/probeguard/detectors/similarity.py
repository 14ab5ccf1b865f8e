"""Semantic similarity between two texts: the cosine of their sentence embeddings.

``SemanticSimilarity`` judges how far one answer moved from another (the prompt-hijack probe
compares a clean answer with the answer given under an injected document, and with clean
reruns). With ``e(t)`` the embedder's L2-normalised row for text ``t``::

    sim(a, b) = e(a) · e(b)          (cosine similarity, in [-1, 1])

Edge cases, defined rather than left to the embedder (undefined is not silently zero):

* ``a.strip() == b.strip()`` → ``1.0`` exactly (so two empty texts are identical, and a
  deterministic pipeline's reruns show zero variation without float noise);
* exactly one text empty (after ``strip``) → ``0.0``: an empty answer shares no meaning;
* a text whose embedding is the zero vector (the hashing embedder on a text with no word,
  e.g. ``"???"``) → ``0.0`` against any different text.

The embedder is ``{"name": "minilm"}`` (all-MiniLM-L6-v2, int8 ONNX; Reimers & Gurevych 2019)
by default. When its ``onnx`` extra is missing (``MissingExtraError``), the detector falls back
to ``fallback`` (default ``{"name": "hashing"}``: hashed word n-gram TF-IDF, unfitted, so idf
is 1 and the cosine is lexical overlap) and says so in ``config()["embedder"]``. The embedder
is built on first use (lazy), once per detector, and is thread-safe.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from probeguard.core.errors import MissingExtraError
from probeguard.models.embedders.base import Embedder
from probeguard.models.embedders.factory import make_embedder

__all__ = ["SemanticSimilarity", "VERSION"]

VERSION = 1
"""Bumped whenever the similarity rule changes (recorded in ``config()``)."""

DEFAULT_EMBEDDER: dict[str, Any] = {"name": "minilm"}
FALLBACK_EMBEDDER: dict[str, Any] = {"name": "hashing"}


class SemanticSimilarity:
    """Cosine similarity of sentence embeddings (see the module docstring).

    ``embedder_spec``: the embedder (``{"name": ..., **params}``, as for
    ``probeguard.models.embedders.factory.make_embedder``); ``fallback``: the embedder used
    when that one's extra is missing (``None``: no fallback, the ``MissingExtraError`` is
    raised).
    """

    name = "semantic_similarity"

    def __init__(
        self,
        embedder_spec: Mapping[str, Any] | None = None,
        fallback: Mapping[str, Any] | None = FALLBACK_EMBEDDER,
    ) -> None:
        spec = dict(embedder_spec if embedder_spec is not None else DEFAULT_EMBEDDER)
        if "name" not in spec:
            raise ValueError(f"an embedder spec needs a 'name', got {spec!r}")
        self.embedder_spec = spec
        self.fallback = dict(fallback) if fallback is not None else None
        self._embedder: Embedder | None = None
        self._fell_back: str | None = None
        self._lock = threading.Lock()

    # -- embedder ---------------------------------------------------------------------
    def embedder(self) -> Embedder:
        """The embedder that judges, built (and probed with one text) on first use; the
        fallback when the configured one's extra is missing."""
        with self._lock:
            if self._embedder is None:
                try:
                    embedder = make_embedder(self.embedder_spec)
                    embedder.embed(["probe"])  # MiniLM finds its model files only on first use
                except MissingExtraError as exc:
                    if self.fallback is None:
                        raise
                    embedder = make_embedder(self.fallback)
                    self._fell_back = str(exc)
                self._embedder = embedder
            return self._embedder

    # -- similarity -------------------------------------------------------------------
    def similarity(self, a: str, b: str) -> float:
        """``sim(a, b)`` (module docstring), a float in [-1, 1]."""
        return self.similarities([(a, b)])[0]

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """``sim`` of each pair, embedding every distinct text once."""
        out: list[float | None] = []
        todo: dict[str, int] = {}
        for a, b in pairs:
            a, b = a.strip(), b.strip()
            if a == b:
                out.append(1.0)
            elif not a or not b:
                out.append(0.0)
            else:
                out.append(None)
                todo.setdefault(a, len(todo))
                todo.setdefault(b, len(todo))
        if todo:
            vectors = np.asarray(self.embedder().embed(list(todo)), dtype=np.float64)
            for i, (a, b) in enumerate(pairs):
                if out[i] is None:
                    va, vb = vectors[todo[a.strip()]], vectors[todo[b.strip()]]
                    na, nb = float(np.linalg.norm(va)), float(np.linalg.norm(vb))
                    cos = float(va @ vb) / (na * nb) if na > 0.0 and nb > 0.0 else 0.0
                    out[i] = min(1.0, max(-1.0, cos))
        return [float(v) for v in out]  # type: ignore[arg-type]

    def config(self) -> dict[str, Any]:
        """For the record: the rule, its version, and the embedder that actually judged
        (building it if needed), with the reason when the fallback replaced the one asked."""
        embedder = self.embedder()
        record: dict[str, Any] = {
            "name": self.name,
            "version": VERSION,
            "rule": "cosine(e(a), e(b)); equal→1, one empty→0",
            "requested": dict(self.embedder_spec),
            "embedder": embedder.config(),
        }
        if self._fell_back is not None:
            record["fallback_reason"] = self._fell_back
        return record

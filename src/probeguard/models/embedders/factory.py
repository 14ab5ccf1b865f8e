"""Build an embedder from a config dict: ``{"name": "hashing" | "minilm" |
"sentence-transformers", ...constructor parameters}`` (see ``probeguard.core.plugins``).

``make_embedder`` returns the process's one embedder per spec (a small registry keyed by the
spec's canonical JSON), so the pipeline's retrievers, the similarity judge and anything else
that embeds with the same model share one model session and one memo. Embedders that learn
nothing from a corpus come wrapped in ``CachedEmbedder`` (memo + on-disk store); those that
fit (hashed TF-IDF) are built afresh each time, since ``fit`` changes their vectors.
``new_embedder`` always builds a fresh, unwrapped one.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from probeguard.core.hashing import digest
from probeguard.core.plugins import build
from probeguard.models.embedders.base import Embedder
from probeguard.models.embedders.cached import DEFAULT_MEMO_SIZE, CachedEmbedder

EMBEDDERS: dict[str, tuple[str, str]] = {
    "hashing": ("probeguard.models.embedders.hashing", "HashingTfidfEmbedder"),
    "minilm": ("probeguard.models.embedders.minilm", "MiniLMOnnxEmbedder"),
    "sentence-transformers": (
        "probeguard.models.embedders.sentence_transformers",
        "SentenceTransformerEmbedder",
    ),
}

_SHARED: dict[str, Embedder] = {}
_SHARED_LOCK = threading.Lock()


def new_embedder(spec: Mapping[str, Any]) -> Embedder:
    """A fresh embedder from ``{"name": ..., **params}``, without a cache."""
    embedder: Embedder = build(EMBEDDERS, "embedder", spec)
    return embedder


def make_embedder(spec: Mapping[str, Any]) -> Embedder:
    """The process's embedder for ``{"name": ..., **params}`` (module docstring).

    ``cache_size`` in the spec sets the memo size of the shared embedder (default 20,000
    vectors; 0: no memo); it is not passed to the embedder.
    """
    params = dict(spec)
    memo_size = int(params.pop("cache_size", DEFAULT_MEMO_SIZE))
    key = digest({"spec": params, "memo": memo_size})
    with _SHARED_LOCK:
        shared = _SHARED.get(key)
        if shared is not None:
            return shared
        embedder = new_embedder(params)
        if type(embedder).fit is not Embedder.fit:
            return embedder
        shared = _SHARED[key] = CachedEmbedder(embedder, memo_size)
        return shared


def shared_embedders() -> int:
    """How many shared embedders this process holds."""
    with _SHARED_LOCK:
        return len(_SHARED)


def forget_shared_embedders() -> None:
    """Drop the shared embedders (and their memos); model sessions stay. For tests that
    need a cold memo in a warm process."""
    with _SHARED_LOCK:
        _SHARED.clear()

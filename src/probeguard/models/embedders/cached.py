"""``CachedEmbedder``: an embedder that computes each distinct text once.

Lookup order for each text: an in-process LRU memo (by sha256 of the text; ``memo_size``
entries), then the on-disk store opened by ``store.use_embedding_cache`` (if any, and only when
the inner embedder has a ``cache_id``), then the inner embedder, called once per ``embed`` with
the distinct texts still missing. Fresh vectors go to the memo and the store. So a poisoned
document's chunks, a repeated query or an answer judged twice are embedded once per process,
and once per cache folder across runs.

Vectors are the inner embedder's exact float32 rows: a hit is byte-equal to recomputing (the
embedders here give a text the same row whatever batch it is in), so reports do not depend on
the cache. Only embedders that learn nothing from a corpus are wrapped (``fit`` would change
their vectors); ``config()`` is the inner one's, so fingerprints do not change either.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from probeguard.models.embedders.base import Embedder
from probeguard.models.embedders.store import EmbeddingStore, active_store, entry_key

__all__ = ["CachedEmbedder", "DEFAULT_MEMO_SIZE"]

DEFAULT_MEMO_SIZE = 20_000
"""Vectors kept in memory (30 MiB at 384 dimensions)."""


class CachedEmbedder(Embedder):
    """``inner`` behind a memo and the active on-disk store (module docstring)."""

    def __init__(self, inner: Embedder, memo_size: int = DEFAULT_MEMO_SIZE) -> None:
        if type(inner).fit is not Embedder.fit:
            raise ValueError(f"{type(inner).__name__} learns from a corpus: it cannot be cached")
        self.inner = inner
        self.name = inner.name
        self.memo_size = int(memo_size)
        self._memo: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self._model_id: str | None = None

    @property
    def dim(self) -> int:  # type: ignore[override]  # the inner embedder's
        return int(self.inner.dim)

    def config(self) -> dict[str, Any]:
        return self.inner.config()

    def cache_id(self) -> str | None:
        return self.inner.cache_id()

    def _store_and_id(self) -> tuple[EmbeddingStore, str] | None:
        store = active_store()
        if store is None:
            return None
        if self._model_id is None:
            self._model_id = self.inner.cache_id()
        return (store, self._model_id) if self._model_id is not None else None

    def _from_memo(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for key in keys:
                row = self._memo.get(key)
                if row is not None:
                    self._memo.move_to_end(key)
                    found[key] = row
        return found

    def _remember(self, rows: dict[str, np.ndarray]) -> None:
        if self.memo_size <= 0:
            return
        with self._lock:
            for key, row in rows.items():
                self._memo[key] = row
                self._memo.move_to_end(key)
            while len(self._memo) > self.memo_size:
                self._memo.popitem(last=False)

    def _compute(
        self, missing: dict[str, str], disk: tuple[EmbeddingStore, str] | None
    ) -> dict[str, np.ndarray]:
        """Rows for ``missing`` (text sha256 → text): from the store, else the inner embedder
        (written back to the store)."""
        found: dict[str, np.ndarray] = {}
        if disk is not None:
            store, model_id = disk
            for key, text in missing.items():
                row = store.get(entry_key(model_id, text))
                if row is not None:
                    found[key] = row
        todo = [key for key in missing if key not in found]
        if todo:
            fresh = self.inner.embed([missing[key] for key in todo])
            for key, row in zip(todo, fresh):
                found[key] = np.array(row, dtype=np.float32)
                if disk is not None:
                    disk[0].put(entry_key(disk[1], missing[key]), found[key])
        return found

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        keys = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
        rows = self._from_memo(keys)
        missing = {key: text for key, text in zip(keys, texts) if key not in rows}
        if missing:
            fresh = self._compute(missing, self._store_and_id())
            self._remember(fresh)
            rows.update(fresh)
        return np.stack([rows[key] for key in keys]).astype(np.float32, copy=False)

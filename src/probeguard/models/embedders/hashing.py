"""A model-free embedder: hashed word n-gram TF-IDF, L2-normalised.

Features are lower-cased word unigrams (and, with ``ngram=(1, 2)``, adjacent word bigrams).
Each feature is hashed with a *stable* hash (blake2b-64 of the UTF-8 word; a bigram combines
its words' hashes), then mixed with the splitmix64 finaliser; the low bits pick one of ``dim``
buckets and the top bit a sign (signed feature hashing, Weinberger et al. 2009: colliding
features cancel in expectation instead of piling up).

Weight of feature f in text d (computed per hashed feature, i.e. per signed bucket):

    w(f, d) = sign(f) · (1 + ln tf(f, d)) · idf(f)             (sublinear tf)
    idf(f)  = ln((1 + N) / (1 + df(f))) + 1                    (smoothed idf, as scikit-learn)

with N and df learned by ``fit`` (df counts the texts holding the feature). Before ``fit``,
idf = 1. The row is then L2-normalised (a text with no word stays a zero row).

Memory: a dense ``(N, dim)`` float32 matrix, 4·dim bytes a row (16 KiB at dim=4096).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from probeguard.models.embedders.base import Embedder

_TOKEN = re.compile(r"\w+", re.UNICODE)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_CACHE_LIMIT = 1_000_000
_BATCH = 1024


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser (Steele, Lea & Flood 2014), elementwise on uint64."""
    x = x ^ (x >> np.uint64(30))
    x = x * _M1
    x = x ^ (x >> np.uint64(27))
    x = x * _M2
    return x ^ (x >> np.uint64(31))


class HashingTfidfEmbedder(Embedder):
    """Hashed word n-gram TF-IDF (see the module docstring for the formula).

    ``dim`` must be a power of two; ``ngram`` is ``(1, 1)`` (words) or ``(1, 2)`` (words and
    adjacent word pairs).
    """

    name = "hashing"

    def __init__(self, dim: int = 4096, ngram: tuple[int, int] | list[int] = (1, 2)) -> None:
        if dim < 2 or dim & (dim - 1):
            raise ValueError(f"dim must be a power of two >= 2, got {dim}")
        ngram_t = tuple(int(n) for n in ngram)
        if ngram_t not in ((1, 1), (1, 2)):
            raise ValueError(f"ngram must be (1, 1) or (1, 2), got {ngram!r}")
        self.dim = int(dim)
        self.ngram: tuple[int, int] = ngram_t
        self._idf = np.ones(2 * self.dim, dtype=np.float32)
        self._n_fit = 0
        self._word_hash: dict[str, int] = {}

    # -- features -------------------------------------------------------------------
    def _hash_word(self, word: str) -> int:
        h = self._word_hash.get(word)
        if h is None:
            h = int.from_bytes(
                hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest(), "little"
            )
            if len(self._word_hash) >= _CACHE_LIMIT:
                self._word_hash.clear()
            self._word_hash[word] = h
        return h

    def _features(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(row, key)`` pairs, one per feature occurrence: ``key = 2·bucket + signbit``."""
        hashes: list[int] = []
        lengths: list[int] = []
        findall = _TOKEN.findall
        for text in texts:
            toks = findall(text.lower())
            lengths.append(len(toks))
            try:
                hashes.extend(list(map(self._word_hash.__getitem__, toks)))
            except KeyError:
                hashes.extend([self._hash_word(w) for w in toks])
        h = np.fromiter(hashes, dtype=np.uint64, count=len(hashes))
        rows = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
        feats = h
        if self.ngram == (1, 2) and h.shape[0] > 1:
            same = rows[:-1] == rows[1:]
            with np.errstate(over="ignore"):
                bigrams = (h[:-1][same] * _GOLDEN) + (h[1:][same] ^ _GOLDEN) + np.uint64(1)
            feats = np.concatenate([h, bigrams])
            rows = np.concatenate([rows, rows[:-1][same]])
        with np.errstate(over="ignore"):
            mixed = _splitmix64(feats)
        bucket = (mixed & np.uint64(self.dim - 1)).astype(np.int64)
        sign_bit = (mixed >> np.uint64(63)).astype(np.int64)
        return rows, 2 * bucket + sign_bit

    def _counts(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Unique ``(row, key)`` pairs with their counts, sorted by row then key."""
        rows, keys = self._features(texts)
        combined = rows * (2 * self.dim) + keys
        uniq, counts = np.unique(combined, return_counts=True)
        return uniq // (2 * self.dim), uniq % (2 * self.dim), counts

    # -- Embedder -------------------------------------------------------------------
    def fit(self, texts: Sequence[str]) -> None:
        """Learn N and the document frequency of every hashed feature from ``texts``."""
        df = np.zeros(2 * self.dim, dtype=np.int64)
        for start in range(0, len(texts), _BATCH):
            _, keys, _ = self._counts(texts[start : start + _BATCH])
            df += np.bincount(keys, minlength=2 * self.dim)
        n = len(texts)
        self._idf = (np.log((1.0 + n) / (1.0 + df)) + 1.0).astype(np.float32)
        self._n_fit = n

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), _BATCH):
            batch = texts[start : start + _BATCH]
            rows, keys, counts = self._counts(batch)
            if not rows.shape[0]:
                continue
            weight = (1.0 + np.log(counts)) * self._idf[keys]
            weight = np.where(keys & 1, -weight, weight)
            flat = rows * self.dim + (keys >> 1)  # sorted, since (row, key) pairs are
            first = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]])
            values = np.add.reduceat(weight, first)
            cells = flat[first]
            norms = np.sqrt(
                np.bincount(cells // self.dim, weights=values * values, minlength=len(batch))
            )
            scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
            block = out[start : start + len(batch)].reshape(-1)
            block[cells] = values * scale[cells // self.dim]
        return out

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "dim": self.dim,
            "ngram": list(self.ngram),
            "idf": "ln((1+N)/(1+df))+1",
            "tf": "1+ln(tf)",
            "hash": "blake2b64+splitmix64",
        }

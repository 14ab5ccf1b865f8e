"""BM25's fast top-k (issue 18): candidates from the posting lists or the nonzero scores, then
the top k among them. The results must be those of the full-vector path, bit for bit, ties
in chunk order included, on random corpora built to tie a lot (few words, repeated chunks)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from probeguard.core.documents import Chunk, Document
from probeguard.pipeline.retrievers import bm25 as bm25_module
from probeguard.pipeline.retrievers import filters as filters_module
from probeguard.pipeline.retrievers.base import SearchRequest
from probeguard.pipeline.retrievers.bm25 import BM25Retriever
from probeguard.pipeline.retrievers.filters import top_k_indices

WORDS = [f"w{i:02d}" for i in range(12)]


def random_chunks(rng: np.random.Generator, n: int) -> list[Chunk]:
    """``n`` chunks of 1-6 words from a 12-word Zipf-ish vocabulary; a third repeat an
    earlier chunk's text exactly (equal scores: ties broken by chunk order)."""
    p = 1.0 / np.arange(1, len(WORDS) + 1)
    p /= p.sum()
    texts: list[str] = []
    for i in range(n):
        if i and rng.random() < 0.33:
            texts.append(texts[int(rng.integers(0, i))])
        else:
            size = int(rng.integers(1, 7))
            texts.append(" ".join(WORDS[j] for j in rng.choice(len(WORDS), size=size, p=p)))
    docs = [Document.create(t, id=f"d{i}", metadata={"part": i % 3}) for i, t in enumerate(texts)]
    return [Chunk.of(d, 0, len(d.text), 0) for d in docs]


def full_vector_top_k(
    r: BM25Retriever, query: str, k: int, allowed: np.ndarray | None
) -> list[tuple[float, int]]:
    """The reference: every chunk's bm25s score (``get_scores_from_ids``), masked chunks set
    to 0, then all positive scores sorted by (score desc, position)."""
    scores = r.scores(query)
    if allowed is not None:
        scores[~allowed] = 0.0
    ranked = sorted(
        (i for i in range(scores.shape[0]) if scores[i] > 0), key=lambda i: (-scores[i], i)
    )
    return [(float(scores[i]), i) for i in ranked[:k]]


@pytest.mark.parametrize("share", [0.0, 0.125, math.inf])
@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 120),
    k=st.sampled_from([1, 3, 10, 50, 200]),
    masked=st.booleans(),
)
def test_search_equals_the_full_vector_path_ties_included(share, seed, n, k, masked):
    rng = np.random.default_rng(seed)
    chunks = random_chunks(rng, n)
    r = BM25Retriever(stopwords=None)
    r.index(chunks)
    for _ in range(8):
        query = " ".join(rng.choice(WORDS + ["absent"], size=int(rng.integers(1, 5))))
        exclude = [f"d{int(rng.integers(0, n))}"] if masked else []
        filters = {"part": [0, 2]} if masked else None
        allowed = None
        if masked:
            allowed = np.array(
                [c.metadata["part"] in (0, 2) and c.doc_id not in exclude for c in chunks]
            )
        request = SearchRequest(query, k, exclude_doc_ids=frozenset(exclude), filters=filters)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(bm25_module, "SPARSE_SHARE", share)
            hits = r.search(request)
        got = [(h.score, chunks.index(h.chunk)) for h in hits]
        assert got == full_vector_top_k(r, query, k, allowed)


@pytest.mark.parametrize("share", [0.0, math.inf])
def test_candidate_scores_are_bitwise_bm25s_scores_and_cover_every_positive(share, monkeypatch):
    monkeypatch.setattr(bm25_module, "SPARSE_SHARE", share)
    rng = np.random.default_rng(3)
    chunks = random_chunks(rng, 300)
    for method in ("lucene", "robertson", "atire"):
        r = BM25Retriever(stopwords=None, method=method)
        r.index(chunks)
        for query in ("w00", "w00 w00 w03", "w11 w05 w00 w07", "w03 absent w09"):
            ids = r.query_ids(query)
            positions, scores = r.candidate_scores(ids)
            full = r.scores(ids)
            assert positions.tolist() == sorted(set(positions.tolist()))
            assert set(np.flatnonzero(full > 0).tolist()) <= set(positions.tolist())
            assert scores.dtype == full.dtype
            assert np.array_equal(scores.view(np.int32), full[positions].view(np.int32))


def test_candidate_scores_of_an_empty_query_are_empty():
    r = BM25Retriever(stopwords=None)
    r.index(random_chunks(np.random.default_rng(0), 10))
    positions, scores = r.candidate_scores([])
    assert positions.shape == scores.shape == (0,)


def brute_force(scores: np.ndarray, k: int, floor: float) -> list[int]:
    idx = [i for i in range(scores.shape[0]) if scores[i] > floor]
    return sorted(idx, key=lambda i: (-float(scores[i]), i))[:k]


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.sampled_from([1, 40, filters_module.SMALL_TOP_K, filters_module.SMALL_TOP_K + 1, 5000]),
    k=st.sampled_from([1, 10, 100, 6000]),
    floor=st.sampled_from([-math.inf, 0.0]),
    zero_share=st.sampled_from([0.0, 0.5, 0.99]),
)
def test_top_k_indices_on_both_sides_of_the_small_path(seed, n, k, floor, zero_share):
    """Mostly-zero vectors with few distinct values (many ties, some NaN), below and above
    ``SMALL_TOP_K``, with and without a floor: always the brute-force order."""
    rng = np.random.default_rng(seed)
    values = np.array([-np.inf, 0.25, 0.5, 1.0, 2.0, np.nan], dtype=np.float32)
    scores = rng.choice(values, size=n, p=[0.1, 0.2, 0.2, 0.2, 0.2, 0.1])
    scores[rng.random(n) < zero_share] = 0.0
    assert top_k_indices(scores, k, floor=floor).tolist() == brute_force(scores, k, floor)

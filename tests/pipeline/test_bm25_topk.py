"""BM25's exact top k with MaxScore pruning (``bm25_topk``, issue 18): the results must be
those of the full-vector path, bit for bit, ties in chunk order included, on random corpora
built to tie a lot (few words, repeated chunks) and to prune a lot (a word in most chunks)."""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from probeguard.core.documents import Chunk, Document
from probeguard.pipeline.retrievers import bm25_topk
from probeguard.pipeline.retrievers import filters as filters_module
from probeguard.pipeline.retrievers.base import SearchRequest
from probeguard.pipeline.retrievers.bm25 import BM25Retriever
from probeguard.pipeline.retrievers.bm25_topk import best_k, term_bounds
from probeguard.pipeline.retrievers.filters import top_k_indices

WORDS = [f"w{i:02d}" for i in range(12)]


def random_chunks(rng: np.random.Generator, n: int, common_share: float = 0.0) -> list[Chunk]:
    """``n`` chunks of 1-6 words from a 12-word Zipf-ish vocabulary; a third repeat an
    earlier chunk's text exactly (equal scores: ties broken by chunk order); with
    ``common_share``, that share of the others also get ``w00`` (a near-stopword)."""
    p = 1.0 / np.arange(1, len(WORDS) + 1)
    p /= p.sum()
    texts: list[str] = []
    for i in range(n):
        if i and rng.random() < 0.33:
            texts.append(texts[int(rng.integers(0, i))])
        else:
            size = int(rng.integers(1, 7))
            words = [WORDS[j] for j in rng.choice(len(WORDS), size=size, p=p)]
            if rng.random() < common_share:
                words.append(WORDS[0])
            texts.append(" ".join(words))
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


def random_query(rng: np.random.Generator) -> str:
    """0-5 words, repeats and an unknown word allowed (an empty query has no hits)."""
    return " ".join(rng.choice(WORDS + ["absent"], size=int(rng.integers(0, 6))))


@pytest.mark.parametrize("small", [0, 64, math.inf])
@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.sampled_from([1, 7, 40, 120, 400]),
    k=st.sampled_from([1, 3, 10, 50, 500]),
    masked=st.booleans(),
    common_share=st.sampled_from([0.0, 0.9]),
    method=st.sampled_from(["lucene", "robertson", "atire"]),
)
def test_search_equals_the_full_vector_path_ties_included(
    small, seed, n, k, masked, common_share, method
):
    """With the Python path for few postings (``SMALL_POSTINGS``) never, by default, always."""
    rng = np.random.default_rng(seed)
    chunks = random_chunks(rng, n, common_share)
    r = BM25Retriever(stopwords=None, method=method)
    r.index(chunks)
    for _ in range(8):
        query = random_query(rng)
        exclude = [f"d{int(rng.integers(0, n))}"] if masked else []
        filters = {"part": [0, 2]} if masked else None
        allowed = None
        if masked:
            allowed = np.array(
                [c.metadata["part"] in (0, 2) and c.doc_id not in exclude for c in chunks]
            )
        request = SearchRequest(query, k, exclude_doc_ids=frozenset(exclude), filters=filters)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(bm25_topk, "SMALL_POSTINGS", small)
            hits = r.search(request)
        got = [(h.score, chunks.index(h.chunk)) for h in hits]
        assert got == full_vector_top_k(r, query, k, allowed)


@pytest.mark.parametrize("small", [0, math.inf])
def test_top_k_scores_are_bitwise_bm25s_scores(small, monkeypatch):
    monkeypatch.setattr(bm25_topk, "SMALL_POSTINGS", small)
    rng = np.random.default_rng(3)
    chunks = random_chunks(rng, 300, common_share=0.8)
    for method in ("lucene", "robertson", "atire"):
        r = BM25Retriever(stopwords=None, method=method)
        r.index(chunks)
        for query in ("w00", "w00 w00 w03", "w11 w05 w00 w07", "w03 absent w09"):
            ids = r.query_ids(query)
            for k in (1, 10, 300):
                positions, scores = r.top_k(ids, k)
                full = r.scores(ids)
                assert scores.dtype == full.dtype
                assert np.array_equal(scores.view(np.int32), full[positions].view(np.int32))
                expected = top_k_indices(full, k, floor=0.0)
                assert positions.tolist() == expected.tolist()


def test_maxscore_skips_the_common_word_list_when_the_rare_word_decides():
    """``w00`` in every chunk bounds a chunk's share far below the 2nd best ``w11`` chunk:
    its list is non-essential for k = 2, and the results are still exact."""
    texts = ["w00"] * 200 + ["w11 w00", "w11", "w11 w11 w00"]
    docs = [Document.create(t, id=f"d{i}") for i, t in enumerate(texts)]
    chunks = [Chunk.of(d, 0, len(d.text), 0) for d in docs]
    r = BM25Retriever(stopwords=None)
    r.index(chunks)
    gathered: list[list[int]] = []
    real = bm25_topk._essential

    def spy(weights, theta, n_terms):
        out = real(weights, theta, n_terms)
        gathered.append(out)
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bm25_topk, "_essential", spy)
        mp.setattr(bm25_topk, "SMALL_POSTINGS", 0)
        hits = r.search(SearchRequest("w00 w11", 2))
    assert gathered == [[r.vocab["w11"]]]
    assert [(h.score, chunks.index(h.chunk)) for h in hits] == full_vector_top_k(
        r, "w00 w11", 2, None
    )


def test_a_bound_sum_equal_to_theta_stays_essential():
    """The prune is strict and has a rounding margin: a prefix whose bounds add up to θ (or
    a hair above it) is kept; only a sum clearly below θ is dropped."""
    weights = {1: 1.0, 2: 1.0, 3: 5.0}
    assert bm25_topk._essential(weights, 1.0, 3) == [1, 2, 3]
    assert bm25_topk._essential(weights, 1.0 * (1 + 2.0**-22), 3) == [1, 2, 3]
    assert bm25_topk._essential(weights, 1.5, 3) == [2, 3]
    assert bm25_topk._essential(weights, 2.0, 3) == [2, 3]
    assert bm25_topk._essential(weights, 2.5, 3) == [3]
    assert bm25_topk._essential(weights, 100.0, 3) == [3]
    assert bm25_topk._essential(weights, 0.0, 3) == [1, 2, 3]


def test_term_bounds_are_each_terms_largest_score():
    indptr = np.array([0, 2, 2, 5, 6])
    data = np.array([0.5, 0.25, 1.0, 3.0, 2.0, 0.75], dtype=np.float32)
    assert term_bounds(data, indptr).tolist() == [0.5, 0.0, 3.0, 0.75]
    assert term_bounds(np.empty(0, dtype=np.float32), np.array([0, 0])).tolist() == [0.0]


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(0, 300),
    k=st.sampled_from([1, 5, 40, 1000]),
    copies=st.integers(1, 4),
)
def test_best_k_is_the_brute_force_order_without_repeats(seed, n, k, copies):
    rng = np.random.default_rng(seed)
    doc_scores = rng.choice(np.array([0.5, 1.0, 1.5, 2.0], dtype=np.float32), size=n)
    entries = [i for i in range(n) for _ in range(int(rng.integers(1, copies + 1)))]
    entries = [entries[i] for i in rng.permutation(len(entries))]
    positions = np.array(entries, dtype=np.int64)
    positions, scores = best_k(positions, doc_scores[positions], k, copies)
    expected = sorted(range(n), key=lambda i: (-doc_scores[i], i))[:k]
    assert positions.tolist() == expected
    assert scores.tolist() == doc_scores[expected].tolist()


def test_the_scratch_is_zero_again_after_searches_and_threads_share_nothing():
    rng = np.random.default_rng(5)
    chunks = random_chunks(rng, 500, common_share=0.7)
    r = BM25Retriever(stopwords=None)
    r.index(chunks)
    queries = [random_query(rng) for _ in range(200)]
    expected = [[(h.score, h.chunk.id) for h in r.search(SearchRequest(q, 5))] for q in queries]
    assert not r._scratch.get().any()

    def run(q: str) -> list[tuple[float, str]]:
        return [(h.score, h.chunk.id) for h in r.search(SearchRequest(q, 5))]

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(run, queries * 3)) == expected * 3
    assert not r._scratch.get().any()


def test_top_k_of_an_empty_query_or_k_0_is_empty():
    r = BM25Retriever(stopwords=None)
    r.index(random_chunks(np.random.default_rng(0), 10))
    for ids, k in (([], 10), (r.query_ids("w00"), 0)):
        positions, scores = r.top_k(ids, k)
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

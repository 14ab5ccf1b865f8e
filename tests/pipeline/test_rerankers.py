"""Re-rankers: the lexical formula by hand, ordering contract, cross-encoder skip, factory."""

from __future__ import annotations

import importlib.util
import math

import pytest

from probeguard.core.documents import Chunk, Document
from probeguard.core.errors import MissingExtraError
from probeguard.pipeline.rerankers import make_reranker
from probeguard.pipeline.rerankers.cross_encoder import CrossEncoderReranker
from probeguard.pipeline.rerankers.lexical import LexicalReranker, shortest_window
from probeguard.pipeline.retrievers.base import Hit


def make_hits(texts: list[str]) -> list[Hit]:
    hits = []
    for i, t in enumerate(texts):
        doc = Document.create(t, id=f"d{i}")
        hits.append(Hit(chunk=Chunk.of(doc, 0, len(t), 0), score=10.0 - i, rank=i + 1))
    return hits


def test_shortest_window():
    toks = "a x b y y a b c".split()
    assert shortest_window(toks, {"a", "b"}) == 2
    assert shortest_window(toks, {"a", "b", "c"}) == 3
    assert shortest_window(toks, {"a", "z"}) == 0
    assert shortest_window(toks, {"x"}) == 1


def test_lexical_scores_by_hand():
    hits = make_hits(
        [
            "wind turbines generate electricity",
            "panels of solar cells",
            "solar panels convert sunlight into electricity",
        ]
    )
    out = LexicalReranker().rerank("solar panels electricity?", hits)
    # every query term is in 2 of the 3 candidates: one idf, so coverage = matched / 3
    # d2: coverage 1, phrase 1/2 ("solar panels"), proximity 3/5 → 1 + .125 + .15
    # d1: coverage 2/3, no query bigram, proximity 2/2 → 2/3 + .25
    # d0: coverage 1/3
    assert [h.chunk.doc_id for h in out] == ["d2", "d1", "d0"]
    assert [h.score for h in out] == pytest.approx([1.275, 2 / 3 + 0.25, 1 / 3])
    assert [h.rank for h in out] == [1, 2, 3]


def test_lexical_idf_favours_the_rarer_term():
    hits = make_hits(["common thing", "common rare", "common other", "common more"])
    out = LexicalReranker(phrase_weight=0, proximity_weight=0).rerank("rare common", hits)
    assert out[0].chunk.doc_id == "d1" and out[0].score == pytest.approx(1.0)
    n, idf = 4, lambda df: math.log(1 + (n - df + 0.5) / (df + 0.5))
    assert out[1].score == pytest.approx(idf(4) / (idf(4) + idf(1)))


def test_lexical_top_n_ties_and_empty_query_keep_incoming_order():
    hits = make_hits(["alpha beta", "gamma", "alpha beta", "delta"])
    r = LexicalReranker()
    out = r.rerank("alpha beta", hits, top_n=2)
    assert [h.chunk.doc_id for h in out] == ["d0", "d2"]  # a tie: incoming order
    none = r.rerank("the of and", hits)  # no content words
    assert [h.chunk.doc_id for h in none] == ["d0", "d1", "d2", "d3"]
    assert all(h.score == 0.0 for h in none)
    assert r.rerank("alpha", []) == []
    assert r.rerank("alpha", hits, top_n=0) == []
    assert r.rerank("alpha beta", hits) == r.rerank("alpha beta", list(reversed(hits)))


HAS_ST = importlib.util.find_spec("sentence_transformers") is not None


@pytest.mark.skipif(
    not HAS_ST,
    reason="sentence-transformers is not installed (extra "
    "'sentence-transformers'); the cross-encoder model also needs the hub",
)
def test_cross_encoder_reranks():  # pragma: no cover - not installed here
    hits = make_hits(["Bananas are yellow.", "Paris is the capital of France."])
    out = CrossEncoderReranker().rerank("What is the capital of France?", hits)
    assert out[0].chunk.doc_id == "d1"


@pytest.mark.skipif(HAS_ST, reason="sentence-transformers is installed")
def test_cross_encoder_missing_extra():
    r = CrossEncoderReranker()
    with pytest.raises(MissingExtraError, match=r"probeguard\[sentence-transformers\]"):
        r.rerank("q", make_hits(["x"]))


def test_make_reranker():
    assert make_reranker(None) is None
    assert make_reranker({"name": "none"}) is None
    lex = make_reranker({"name": "lexical", "phrase_weight": 0.5})
    assert isinstance(lex, LexicalReranker) and lex.config()["phrase_weight"] == 0.5
    ce = make_reranker({"name": "cross-encoder"})
    assert isinstance(ce, CrossEncoderReranker)
    assert ce.config()["model"] == "cross-encoder/ms-marco-MiniLM-L-6-v2"
    with pytest.raises(ValueError, match=r"known: cross-encoder, lexical"):
        make_reranker({"name": "colbert"})
    with pytest.raises(ValueError, match="unknown parameter"):
        make_reranker({"name": "lexical", "alpha": 1})

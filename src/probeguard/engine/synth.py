"""The synthesizer with its lexical baseline: ``probeguard.dataset.synth.synthesize`` with a
BM25 ranker (``probeguard.pipeline.retrievers.bm25``, one chunk per whole document) that
checks every answerable case's evidence is retrievable. Used by ``probeguard dataset synth``
and by a scan that has no golden questions."""

from __future__ import annotations

from collections.abc import Sequence

from probeguard.core.documents import Chunk, Document
from probeguard.dataset.synth import Ranker, Synthesis, synthesize
from probeguard.pipeline.retrievers.base import SearchRequest
from probeguard.pipeline.retrievers.bm25 import BM25Retriever

__all__ = ["BASELINE_K", "bm25_ranker", "synthesize_checked"]

BASELINE_K = 5
"""Top-k of the lexical baseline an answerable case's evidence must be in."""


def bm25_ranker(documents: Sequence[Document]) -> Ranker:
    """``rank(question, k)`` → the top-``k`` document ids under BM25 (Lucene variant, English
    stopwords) over the documents' titles and texts, one chunk per document."""
    retriever = BM25Retriever()
    retriever.index(
        [
            Chunk(id=d.id, doc_id=d.id, text=f"{d.title}\n{d.text}", start=0, end=0, index=0)
            for d in documents
        ]
    )

    def rank(question: str, k: int) -> list[str]:
        return [hit.chunk.doc_id for hit in retriever.search(SearchRequest(query=question, k=k))]

    return rank


def synthesize_checked(
    documents: Sequence[Document], n: int, seed: int, *, k: int = BASELINE_K
) -> Synthesis:
    """``synthesize`` with the BM25 baseline's top-``k`` check on answerable cases."""
    return synthesize(documents, n, seed, rank=bm25_ranker(documents), k=k)

"""An offline re-ranker: idf-weighted query-term coverage plus phrase and proximity bonuses.

Over the content words (``probeguard.nlp.text.content_words``: lower-cased, stopwords removed) of
the query q and of each candidate d among the n candidates:

    idf(t)       = ln(1 + (n − df(t) + 0.5) / (df(t) + 0.5))   df over the candidates
    coverage(d)  = Σ_{t ∈ Q ∩ d} idf(t) / Σ_{t ∈ Q} idf(t)       Q: distinct query terms
    phrase(d)    = |query bigrams found adjacent in d| / |query bigrams|  (0 if none)
    proximity(d) = |M| / w(d) when |M| ≥ 2, else 0               M = Q ∩ d; w(d) the length of
                                                                 the shortest window of d
                                                                 holding every term of M
    score(d)     = coverage(d) + phrase_weight · phrase(d) + proximity_weight · proximity(d)

The idf is the BM25 (Lucene) idf computed over the candidate set, so a term every candidate
shares weighs little. Adjacency and windows count content words (stopwords removed). A query
with no content words scores every hit 0 and keeps the incoming order. Deterministic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from probeguard.nlp.text import content_words
from probeguard.pipeline.rerankers.base import Reranker
from probeguard.pipeline.retrievers.base import Hit


def shortest_window(tokens: Sequence[str], terms: set[str]) -> int:
    """Length of the shortest contiguous run of ``tokens`` holding every term in ``terms``
    (0 when some term is missing)."""
    need = len(terms)
    if need == 0:
        return 0
    counts: dict[str, int] = {}
    have = 0
    best = 0
    left = 0
    for right, tok in enumerate(tokens):
        if tok not in terms:
            continue
        counts[tok] = counts.get(tok, 0) + 1
        if counts[tok] == 1:
            have += 1
        while have == need:
            width = right - left + 1
            if best == 0 or width < best:
                best = width
            lt = tokens[left]
            if lt in terms:
                counts[lt] -= 1
                if counts[lt] == 0:
                    have -= 1
            left += 1
    return best


class LexicalReranker(Reranker):
    """Query-term coverage re-scoring (see the module docstring for the formula)."""

    name = "lexical"

    def __init__(self, phrase_weight: float = 0.25, proximity_weight: float = 0.25) -> None:
        self.phrase_weight = float(phrase_weight)
        self.proximity_weight = float(proximity_weight)

    def score(self, query: str, hits: Sequence[Hit]) -> Sequence[float]:
        q_seq = content_words(query)
        q_terms = list(dict.fromkeys(q_seq))
        if not q_terms:
            return [0.0] * len(hits)
        docs = [content_words(h.chunk.text) for h in hits]
        doc_sets = [set(d) for d in docs]
        n = len(hits)
        idf = {}
        for t in q_terms:
            df = sum(1 for s in doc_sets if t in s)
            idf[t] = math.log(1 + (n - df + 0.5) / (df + 0.5))
        total_idf = sum(idf[t] for t in q_terms)
        q_bigrams = list(dict.fromkeys(zip(q_seq, q_seq[1:])))
        scores = []
        for tokens, tset in zip(docs, doc_sets):
            matched = [t for t in q_terms if t in tset]
            coverage = sum(idf[t] for t in matched) / total_idf
            phrase = 0.0
            if q_bigrams:
                d_bigrams = set(zip(tokens, tokens[1:]))
                phrase = sum(1 for bg in q_bigrams if bg in d_bigrams) / len(q_bigrams)
            proximity = 0.0
            if len(matched) >= 2:
                proximity = len(matched) / shortest_window(tokens, set(matched))
            scores.append(
                coverage + self.phrase_weight * phrase + self.proximity_weight * proximity
            )
        return scores

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "phrase_weight": self.phrase_weight,
            "proximity_weight": self.proximity_weight,
        }

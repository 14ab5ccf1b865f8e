"""Conflict detection: two retrieved documents disagree on a number or a date.

Reuses the offline judge (``probeguard.detectors.offline_judge``), whose number and date
readers come from ``probeguard.nlp.mentions``. Every sentence of a context that
holds a number or a date (``number_mentions`` / ``date_mentions``) is a claim; it is judged
against each context of *another* document (oracle contexts count as documents of their
own). A conflict is a ``contradicted`` verdict whose reason is a number or a date: the
sentence and the other context's sentence are about the same thing (≥ half the claim's
words, the same names) and give a different number before the same unit ("30 days" vs
"45 days") or a different date. Polarity-only disagreements are not counted here.

``conflicts(...)`` lists each disagreeing pair once. With ``conflict: flag`` the pipeline
records them in ``output.metadata["defences"]["conflicts"]``; with ``refuse`` it also refuses
when a conflict involves a chunk the answer cites (any chunk, when the answer cites none).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from probeguard.core.pipeline import ORACLE_DOC_ID, Context, RetrievedChunk
from probeguard.detectors.offline_judge import OfflineJudge
from probeguard.nlp.mentions import date_mentions, number_mentions
from probeguard.nlp.text import sentence_spans

__all__ = ["POLARITY_REASON", "conflicts", "touches"]

POLARITY_REASON = "the context states the opposite polarity"
"""The offline judge's reason for a polarity-only contradiction (not a conflict here)."""


def _source(chunk: RetrievedChunk) -> str:
    return chunk.chunk_id if chunk.doc_id == ORACLE_DOC_ID else chunk.doc_id


def conflicts(chunks: Sequence[RetrievedChunk]) -> list[dict[str, Any]]:
    """Number or date disagreements between the chunks of different documents, each
    ``{"chunk_ids": [a, b], "doc_ids": [a, b], "claim": ..., "evidence": ..., "reason": ...}``
    (``a`` the chunk whose sentence is the claim), in rank order, each pair of sentences once."""

    judge = OfflineJudge()
    found: list[dict[str, Any]] = []
    seen: set[frozenset[str]] = set()
    for chunk in chunks:
        others = [c for c in chunks if _source(c) != _source(chunk)]
        claims = [chunk.text[s:e] for s, e in sentence_spans(chunk.text)]
        claims = [c for c in claims if number_mentions(c) or date_mentions(c)]
        if not others or not claims:
            continue
        judgment = judge.judge(claims, [Context(c.chunk_id, c.text, c.title) for c in others])
        for claim, row in zip(claims, judgment.verdicts):
            for other, verdict in zip(others, row):
                if verdict.label != "contradicted" or verdict.reason == POLARITY_REASON:
                    continue
                key = frozenset({" ".join(claim.split()), " ".join(verdict.evidence.split())})
                if key in seen:
                    continue
                seen.add(key)
                found.append(
                    {
                        "chunk_ids": [chunk.chunk_id, other.chunk_id],
                        "doc_ids": [chunk.doc_id, other.doc_id],
                        "claim": claim,
                        "evidence": verdict.evidence,
                        "reason": verdict.reason,
                    }
                )
    return found


def touches(found: Sequence[dict[str, Any]], cited_chunk_ids: Sequence[str]) -> bool:
    """Some conflict involves a cited chunk (any conflict when nothing is cited)."""
    if not found:
        return False
    if not cited_chunk_ids:
        return True
    cited = set(cited_chunk_ids)
    return any(cited & set(c["chunk_ids"]) for c in found)

"""Near-duplicate suppression: a retrieved chunk nearly identical to a higher-ranked chunk of
*another* document is dropped (overlapping chunks of one document are normal and kept).

Two chunks are near-duplicates when their word 3-shingle sets ``A``, ``B`` (``nlp.text.words``,
so lower-cased, punctuation dropped) satisfy::

    containment(A, B) = |A ∩ B| / min(|A|, |B|)  ≥  NEAR_DUPLICATE  (0.8)

Containment rather than Jaccard, so that a near-copy cut at other chunk boundaries still
counts. One changed number in a 128-word chunk removes 3 of ~126 shingles (0.98); in a
20-word sentence 3 of 18 (0.83). Texts of fewer than 3 words compare their word sequences
for equality. Which copy survives is decided by rank alone: run ``demote_archived`` first,
and the current version outranks its draft or archived copy (the pipeline does).
"""

from __future__ import annotations

from collections.abc import Sequence

from probeguard.nlp.text import words
from probeguard.pipeline.defences.ranking import renumber
from probeguard.pipeline.retrievers.base import Hit

__all__ = ["NEAR_DUPLICATE", "dedupe", "near_duplicate", "shingles"]

NEAR_DUPLICATE = 0.8
"""Least shingle containment for two chunks to be near-duplicates."""


def shingles(text: str, n: int = 3) -> frozenset[tuple[str, ...]]:
    """The word ``n``-grams of ``text`` (the whole word sequence when shorter than ``n``)."""
    w = words(text)
    if len(w) < n:
        return frozenset({tuple(w)}) if w else frozenset()
    return frozenset(tuple(w[i : i + n]) for i in range(len(w) - n + 1))


def near_duplicate(
    a: frozenset[tuple[str, ...]], b: frozenset[tuple[str, ...]], threshold: float = NEAR_DUPLICATE
) -> bool:
    """Shingle containment ≥ ``threshold`` (two empty texts are not duplicates)."""
    if not a or not b:
        return False
    return len(a & b) / min(len(a), len(b)) >= threshold


def dedupe(hits: Sequence[Hit]) -> tuple[list[Hit], list[dict[str, str]]]:
    """The hits without near-duplicates of higher-ranked chunks of other documents, and one
    record ``{"chunk_id", "duplicate_of"}`` per dropped chunk."""
    kept: list[tuple[Hit, frozenset[tuple[str, ...]]]] = []
    dropped: list[dict[str, str]] = []
    for hit in hits:
        sh = shingles(hit.chunk.text)
        twin = next(
            (
                k
                for k, ksh in kept
                if k.chunk.doc_id != hit.chunk.doc_id and near_duplicate(sh, ksh)
            ),
            None,
        )
        if twin is None:
            kept.append((hit, sh))
        else:
            dropped.append({"chunk_id": hit.chunk.id, "duplicate_of": twin.chunk.id})
    return renumber([h for h, _ in kept]), dropped

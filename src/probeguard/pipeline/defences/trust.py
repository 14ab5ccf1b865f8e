"""Source trust tiers: provenance weighting of retrieved hits.

A document's *tier* is ``metadata[trust_field]`` when the document carries it, else its
``source`` (the file a corpus document came from, ``probe:<name>`` for a document a probe
injects). Its *weight* ``w`` is ``trust_tiers[tier]`` for an exact key, else the first glob
key (``fnmatch``, case-sensitive) that matches, else ``default_trust``. With hits at
positions ``i = 1..n`` (the retriever's or re-ranker's order)::

    weighted(i) = w_i / i

Hits with ``w = 0`` are dropped; the rest are re-ordered by ``weighted`` descending, ties
kept in the original order (a stable sort). So the rank score, not the backend's raw score,
is weighted, and a weight means the same for cosine, BM25 and fused scores: a hit at rank 1
with weight 0.3 falls below the trusted hits at ranks 2 and 3 (1/2, 1/3 > 0.3) but stays
above rank 4 (1/4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any

from probeguard.pipeline.defences.ranking import renumber
from probeguard.pipeline.retrievers.base import Hit

__all__ = ["apply_trust", "tier_of", "trust_weight"]

_GLOB = frozenset("*?[")


def tier_of(metadata: Mapping[str, Any], source: str, trust_field: str) -> str:
    """The document's tier: its ``trust_field`` metadata, else its source."""
    value = metadata.get(trust_field)
    return str(value) if value is not None and str(value) != "" else source


def trust_weight(tier: str, tiers: Mapping[str, float], default: float) -> float:
    """The weight of ``tier``: exact key, else the first matching glob key, else ``default``."""
    if tier in tiers:
        return float(tiers[tier])
    for key, weight in tiers.items():
        if _GLOB & set(key) and fnmatchcase(tier, key):
            return float(weight)
    return float(default)


def apply_trust(
    hits: Sequence[Hit],
    sources: Mapping[str, str],
    tiers: Mapping[str, float],
    default: float,
    trust_field: str,
) -> tuple[list[Hit], dict[str, Any]]:
    """The hits re-weighted by trust (module docstring) and a record of what changed:
    ``{"dropped": [doc ids], "weights": {doc id: weight}}`` for documents weighted ≠ 1.
    ``sources`` maps a document id to its source ("" when unknown)."""
    kept: list[tuple[float, int, Hit]] = []
    dropped: list[str] = []
    weights: dict[str, float] = {}
    for i, hit in enumerate(hits, start=1):
        tier = tier_of(hit.chunk.metadata, sources.get(hit.chunk.doc_id, ""), trust_field)
        w = trust_weight(tier, tiers, default)
        if w != 1.0:
            weights[hit.chunk.doc_id] = w
        if w <= 0.0:
            if hit.chunk.doc_id not in dropped:
                dropped.append(hit.chunk.doc_id)
            continue
        kept.append((w / i, i, hit))
    kept.sort(key=lambda item: (-item[0], item[1]))
    return renumber([h for _, _, h in kept]), {"dropped": dropped, "weights": weights}

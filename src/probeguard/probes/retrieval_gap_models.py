"""The retrieval-gap probe's typed results: a variant's rank row, a group's evidence and the
probe's summary (rules in ``probeguard.probes.retrieval_gap``'s docstring)."""

from __future__ import annotations

from probeguard.core.estimate import Estimate
from probeguard.probes.models import EvidenceModel, ProbeEvidence, ProbeSummary

__all__ = ["FAILING_OUTCOMES", "OUTCOMES", "GapEvidence", "GapSummary", "VariantRank"]

OUTCOMES: tuple[str, ...] = ("held", "gap", "original_miss", "original_miss_unrecovered")
"""A group's outcomes (``probeguard.probes.retrieval_gap``); ``gap`` and ``original_miss`` fail."""
FAILING_OUTCOMES = frozenset({"gap", "original_miss"})


class VariantRank(EvidenceModel):
    """The gold evidence's rank under one paraphrase."""

    role: str
    kind: str
    text: str
    rank: int
    """Its rank among the retrieved documents; ``top_k + 1`` when it left the top-k."""
    left_top_k: bool
    delta: int
    """``rank`` minus the original question's rank (``top_k + 1`` when the original missed)."""


class GapEvidence(ProbeEvidence):
    question_id: str | None = None
    top_k: int | None = None
    threshold: float = 1.0
    """``rank_delta_threshold``."""
    original_rank: int | None = None
    outcome: str | None = None
    """One of ``OUTCOMES`` (module docstring); None while the group cannot be judged."""
    variants: list[VariantRank] = []
    mean_delta: float | None = None
    lost_by: list[str] = []
    """Paraphrase kinds under which the gold evidence left the top-k."""
    recovered_by: list[str] = []
    """Kinds (or ``semantic``) whose call retrieved the gold evidence the original missed."""
    semantic_differs: bool | None = None
    """The ``semantic`` role (the question as written, retrieved by meaning) ranked other
    documents than the original call: the pipeline's own retrieval is not that semantic one
    (None: no semantic role answered)."""
    anchors: list[str] = []
    """The question's words that the ``targeted`` rewording aimed at (highest idf first)."""
    reasons: list[str] = []


class GapSummary(ProbeSummary):
    mean_rank_delta: Estimate
    """Bootstrap mean over held/gap groups of their mean rank delta."""
    kind_gap_rates: dict[str, Estimate]
    kind_mean_rank_delta: dict[str, Estimate]
    kind_moved_rates: dict[str, Estimate]
    """Per kind: the share of its variants under which the gold rank changed."""
    original_misses: Estimate
    """Share of groups with an answered original whose original missed the gold evidence."""
    original_miss_recovered: Estimate
    """Share of those original misses that a rewording recovered (scored as failures)."""
    outcomes: dict[str, int]

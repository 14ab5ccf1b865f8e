"""``comparison.json``: what ``probeguard sweep`` saves (``Comparison``) beside one run
directory per backend, and what ``comparison.md`` renders (``reports.comparison``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, SerializationInfo, model_serializer

from probeguard.core.artifacts import FROZEN_RESULT, ArtifactHeader, JsonEstimate

__all__ = [
    "COMPARISON_VERSION",
    "BackendPipeline",
    "Comparison",
    "ComparisonRow",
    "GateAnalysis",
    "GateRates",
    "ScoreSpread",
]

COMPARISON_VERSION = 1
"""1: the first with a header (before it, ``comparison.json`` had no ``kind``/``version``)."""


class ScoreSpread(BaseModel):
    """Top retrieved scores of a set of questions (``metrics.gate``)."""

    model_config = FROZEN_RESULT

    n: int
    empty: int
    """Questions with nothing retrieved (no finite score)."""
    min: float | None = None
    median: float | None = None
    max: float | None = None
    """Left out (with ``min`` and ``median``) when no score is finite."""

    @model_serializer(mode="wrap")
    def _leave_out_undefined(self, handler: Any, info: SerializationInfo) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.min is None:
            for key in ("min", "median", "max"):
                data.pop(key, None)
        return data


class GateRates(BaseModel):
    """A ``min_score`` gate's false-refusal and abstention rates (Wilson)."""

    model_config = FROZEN_RESULT

    min_score: float
    false_refusal: JsonEstimate
    abstention: JsonEstimate
    youden_j: float | None = None
    """The best gate's J = abstention − false refusal (left out for the configured gate)."""

    @model_serializer(mode="wrap")
    def _leave_out_j(self, handler: Any, info: SerializationInfo) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.youden_j is None:
            data.pop("youden_j", None)
        return data


class GateAnalysis(BaseModel):
    """How a ``min_score`` gate behaves on one backend's scores (``metrics.gate``)."""

    model_config = FROZEN_RESULT

    answerable_top_score: ScoreSpread
    unanswerable_top_score: ScoreSpread
    auroc: float | None
    """P(answerable top score > unanswerable one); None when either side is empty."""
    spread: float | None
    """(q95 − q05)/|q95| of the top scores; None when undefined."""
    saturated: bool
    configured_gate: GateRates | None
    best_gate: GateRates | None


class BackendPipeline(BaseModel):
    """One backend's scanned pipeline."""

    model_config = FROZEN_RESULT

    fingerprint: str
    retriever: Any
    """The reference pipeline's ``retriever`` setting as recorded."""


class ComparisonRow(BaseModel):
    """One headline rate across the backends."""

    model_config = FROZEN_RESULT

    label: str
    path: str
    """Dotted path into ``run.json``'s ``summary``."""
    values: dict[str, Any]
    """Backend → the value there (an Estimate's JSON, a number, or None)."""


class Comparison(ArtifactHeader):
    """``comparison.json``: same corpus, questions, probes and seed; only the retriever
    differs (``pipeline_name``/``pipeline_fingerprint`` are None: see ``pipelines``)."""

    kind: Literal["sweep"] = "sweep"
    version: int = COMPARISON_VERSION
    backends: list[str]
    min_score: float | None
    """The gate every backend ran with (None: no gate)."""
    pipelines: dict[str, BackendPipeline]
    rows: list[ComparisonRow]
    """Headline rates present in at least one run."""
    gate: dict[str, GateAnalysis]
    cases: dict[str, int]
    """Cases each backend's scan ran."""

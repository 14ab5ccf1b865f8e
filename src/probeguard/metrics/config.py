"""Metric settings: the standard-evaluation baseline, the standard metrics' thresholds, and which
metric families a scan computes."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from probeguard.core.config import StrictModel


class StandardEvalConfig(StrictModel):
    """The standard-evaluation baseline: ROUGE-L of the answer against the gold answers."""

    measure: Literal["recall", "f1"] = "recall"
    threshold: float = Field(default=0.75, ge=0.0, le=1.0)


class Thresholds(StrictModel):
    """Least acceptable mean per metric (``null``: no threshold). ``probeguard eval`` exits 1
    when a metric's mean falls below its threshold."""

    context_precision: float | None = Field(default=0.80, ge=0.0, le=1.0)
    context_recall: float | None = Field(default=0.85, ge=0.0, le=1.0)
    contextual_relevancy: float | None = Field(default=0.75, ge=0.0, le=1.0)
    faithfulness: float | None = Field(default=0.90, ge=0.0, le=1.0)
    answer_relevancy: float | None = Field(default=0.80, ge=0.0, le=1.0)
    exact_match: float | None = Field(default=None, ge=0.0, le=1.0)
    token_f1: float | None = Field(default=None, ge=0.0, le=1.0)
    containment: float | None = Field(default=None, ge=0.0, le=1.0)


class EvalConfig(StrictModel):
    """``probeguard eval``: thresholds on the standard metrics."""

    thresholds: Thresholds = Field(default_factory=Thresholds)


class MetricsConfig(StrictModel):
    """Which metric families a scan computes."""

    standard: bool = True
    """The standard metrics (faithfulness, context precision/recall, relevancy, EM/F1) on the
    answerable golden questions, in ``summary.golden.standard``."""

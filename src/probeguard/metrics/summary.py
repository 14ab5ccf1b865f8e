"""Means of the standard metrics over records, overall and faceted by tag.

For each metric: the mean over the records where it is defined, with a seeded percentile
bootstrap 95% interval (``stats.bootstrap_mean``; n = scored records), and ``unscored`` =
records where it is NaN (left out of the mean, never averaged as 0). A facet is the records
carrying a tag; records without tags belong to no facet. Facets are sorted by tag.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from probeguard.core.artifacts import FROZEN_RESULT, JsonEstimate
from probeguard.metrics.standard import METRICS
from probeguard.stats import bootstrap_mean

__all__ = ["MetricMean", "MetricsSummary", "TagFacet", "metric_means", "summarize_values"]


class MetricMean(BaseModel):
    """One metric's mean over the records where it is defined."""

    model_config = FROZEN_RESULT

    mean: JsonEstimate
    """Percentile-bootstrap 95% interval; n = scored records (NaN, written null, when none)."""
    unscored: int
    """Records where the metric is undefined (left out of the mean, never counted as 0)."""


class TagFacet(BaseModel):
    """The means over the records that carry one tag."""

    model_config = FROZEN_RESULT

    records: int
    metrics: dict[str, MetricMean]


class MetricsSummary(BaseModel):
    """``summarize_values`` as a model: the means overall and per tag (sorted by tag)."""

    model_config = FROZEN_RESULT

    records: int
    metrics: dict[str, MetricMean]
    """Metric name → its mean, in ``METRICS`` order."""
    by_tag: dict[str, TagFacet] = Field(default_factory=dict)


def metric_means(rows: Sequence[Mapping[str, float]], *, seed: int) -> dict[str, Any]:
    """``{metric: {"mean": Estimate JSON, "unscored": int}}`` over ``rows`` (one mapping of
    metric → value per record; NaN = unscored)."""
    out: dict[str, Any] = {}
    for name in METRICS:
        values = [float(r.get(name, math.nan)) for r in rows]
        est = bootstrap_mean(values, seed=seed)
        out[name] = {"mean": est.model_dump(), "unscored": len(values) - est.n}
    return out


def summarize_values(
    rows: Sequence[Mapping[str, float]], tags: Sequence[Sequence[str]], *, seed: int
) -> dict[str, Any]:
    """``{"records", "metrics", "by_tag": {tag: {"records", "metrics"}}}`` (module doc)."""
    if len(rows) != len(tags):
        raise ValueError("one tag list per row")
    by_tag: dict[str, Any] = {}
    for tag in sorted({t for ts in tags for t in ts}):
        chosen = [r for r, ts in zip(rows, tags) if tag in ts]
        by_tag[tag] = {"records": len(chosen), "metrics": metric_means(chosen, seed=seed)}
    return {"records": len(rows), "metrics": metric_means(rows, seed=seed), "by_tag": by_tag}

"""Pass/fail of each metric's mean against its threshold.

A metric passes when its mean over the scored records is at least its threshold
(``mean ≥ t``). A metric with a threshold but no scored record (n = 0, e.g. context recall on
a dataset without ``groundTruth``) is ``unscored``: neither a pass nor a failure, and listed as
such — undefined is not zero. ``passed`` is True when no metric failed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from probeguard.metrics.config import Thresholds

__all__ = ["ThresholdCheck", "ThresholdReport", "check_thresholds", "parse_threshold"]


class ThresholdCheck(BaseModel):
    """One metric's mean against its threshold."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    threshold: float
    """The least acceptable mean."""
    value: float | None
    """The mean (None when nothing was scored)."""
    n: int
    """Records scored."""
    status: Literal["pass", "fail", "unscored"]


class ThresholdReport(BaseModel):
    """``check_thresholds`` as a model."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    checks: dict[str, ThresholdCheck] = Field(default_factory=dict)
    """Metric → its check, for every metric that has a threshold."""
    failed: list[str] = Field(default_factory=list)
    unscored: list[str] = Field(default_factory=list)
    """Metrics with a threshold but nothing scored: neither pass nor fail."""
    passed: bool = True
    """No metric failed."""


def check_thresholds(
    means: Mapping[str, Mapping[str, Any]], thresholds: Thresholds
) -> dict[str, Any]:
    """``{"checks": {metric: {threshold, value, n, status}}, "failed": [...],
    "unscored": [...], "passed": bool}`` for every metric that has a threshold; ``means``
    maps a metric to its Estimate's JSON (``value`` None or NaN when undefined)."""
    checks: dict[str, Any] = {}
    for name, minimum in thresholds.model_dump().items():
        if minimum is None:
            continue
        est = means.get(name, {})
        value = est.get("value")
        if value is None or value != value or not est.get("n"):
            status = "unscored"
            value = None
        else:
            status = "pass" if value >= minimum else "fail"
        checks[name] = {
            "threshold": minimum,
            "value": value,
            "n": est.get("n", 0),
            "status": status,
        }
    failed = [k for k, c in checks.items() if c["status"] == "fail"]
    return {
        "checks": checks,
        "failed": failed,
        "unscored": [k for k, c in checks.items() if c["status"] == "unscored"],
        "passed": not failed,
    }


def parse_threshold(text: str) -> tuple[str, float | None]:
    """``"faithfulness=0.8"`` → ``("faithfulness", 0.8)``; ``"exact_match=off"`` (or
    ``none``) removes a threshold. Raises ``ValueError`` naming what is wrong."""
    name, sep, raw = text.partition("=")
    name, raw = name.strip().replace("-", "_"), raw.strip()
    if not sep or not name or not raw:
        raise ValueError(f"expected METRIC=VALUE, got {text!r}")
    if name not in Thresholds.model_fields:
        raise ValueError(f"unknown metric {name!r}; one of {', '.join(Thresholds.model_fields)}")
    if raw.lower() in ("off", "none", "null"):
        return name, None
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(
            f"threshold for {name} must be a number in [0, 1] or 'off', got {raw!r}"
        ) from None
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"threshold for {name} must lie in [0, 1], got {value}")
    return name, value

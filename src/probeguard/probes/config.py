"""Which probes run, their settings, and the FCS overlap weights (``ScanConfig.probes``)."""

from __future__ import annotations

import math
from typing import Any

from pydantic import Field, field_validator

from probeguard.core.config import StrictModel
from probeguard.probes import load_probes


def default_probes() -> list[str]:
    """Every registered probe, built-in and installed (``load_probes`` order)."""
    return list(load_probes())


class ProbesConfig(StrictModel):
    """Which probes run, their settings, and the FCS overlap weights."""

    enabled: list[str] = Field(default_factory=default_probes)
    """The probes to run; by default every registered one (``probeguard list``)."""
    settings: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per-probe constructor settings, e.g. ``{"retrieval_gap": {"rank_delta_threshold": 2}}``."""
    overlap_weights: dict[str, float] = Field(default_factory=dict)
    """Overrides of the probes' own FCS overlap weights (``Probe.overlap_weight``: the share
    of a probe's failures that standard evaluation also catches)."""
    top_k: int | None = Field(default=None, ge=1)
    """The pipeline's retrieval depth, for pipelines that do not report it (the reference
    pipeline does)."""

    @field_validator("overlap_weights")
    @classmethod
    def _weights(cls, weights: dict[str, float]) -> dict[str, float]:
        """Each weight is a share, in [0, 1], of a registered probe (a misspelt name would
        be silently ignored)."""
        known = load_probes()
        unknown = sorted(set(weights) - set(known))
        if unknown:
            raise ValueError(
                f"overlap weight for unknown probe(s) {', '.join(unknown)}; "
                f"known: {', '.join(sorted(known))}"
            )
        bad = sorted(k for k, w in weights.items() if not (math.isfinite(w) and 0 <= w <= 1))
        if bad:
            raise ValueError(f"overlap weights must lie in [0, 1]: {', '.join(bad)}")
        return weights

    @field_validator("enabled")
    @classmethod
    def _unique(cls, names: list[str]) -> list[str]:
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"probes listed more than once: {', '.join(repeated)}")
        return names

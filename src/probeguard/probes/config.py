"""Which probes run, their settings, and the FCS overlap weights (``ScanConfig.probes``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from probeguard.core.config import StrictModel

ALL_PROBES = [
    "chunk_fracture",
    "retrieval_gap",
    "corpus_contradiction",
    "prompt_hijack",
    "corpus_poisoning",
    "unanswerable",
    "benign_control",
    "attack_types",
]


class ProbesConfig(StrictModel):
    """Which probes run, their settings, and the FCS overlap weights."""

    enabled: list[str] = Field(default_factory=lambda: list(ALL_PROBES))
    settings: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per-probe constructor settings, e.g. ``{"retrieval_gap": {"rank_delta_threshold": 2}}``."""
    overlap_weights: dict[str, float] = Field(default_factory=dict)
    """Overrides of the default FCS overlap weights (share of a probe's failures that
    standard evaluation also catches)."""
    top_k: int | None = Field(default=None, ge=1)
    """The pipeline's retrieval depth, for pipelines that do not report it (the reference
    pipeline does)."""

    @field_validator("enabled")
    @classmethod
    def _unique(cls, names: list[str]) -> list[str]:
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"probes listed more than once: {', '.join(repeated)}")
        return names

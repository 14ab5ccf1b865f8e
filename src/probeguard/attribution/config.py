"""Attribution settings (``ScanConfig.attribution``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from probeguard.attribution.swaps import SWAPS

__all__ = ["AttributionConfig"]


class AttributionConfig(BaseModel):
    """Whether a scan attributes its failures, how many, and with which swaps."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    max_cases: int = Field(default=200, ge=0)
    """Most failures attributed per scan: failed golden cases first (in question order), then
    failed probe groups (in probe, then group order); the rest are counted as skipped."""
    swaps: list[str] = Field(default_factory=lambda: list(SWAPS))
    """The swaps to run (a subset of ``oracle_context``, ``whole_document``,
    ``better_retrieval``, ``clean_corpus``, ``hardened_prompt``, ``no_reranker``)."""

    @field_validator("swaps")
    @classmethod
    def _known(cls, names: list[str]) -> list[str]:
        unknown = [n for n in names if n not in SWAPS]
        if unknown or len(set(names)) != len(names):
            raise ValueError(
                f"swaps must be distinct names among {', '.join(SWAPS)}; got {names!r}"
            )
        return [s for s in SWAPS if s in names]

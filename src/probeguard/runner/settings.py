"""How the runner calls the pipeline (``ScanConfig.runner``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from probeguard.core.config import StrictModel


class RunnerSettings(StrictModel):
    concurrency: int = Field(default=4, ge=1, le=1024)
    timeout_s: float = Field(default=120.0, gt=0)
    retries: int = Field(default=3, ge=0, le=20)
    cache_dir: Path | None = Path(".probeguard-cache")
    """Content-addressed response cache; None disables it."""

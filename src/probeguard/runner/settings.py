"""How the runner calls the pipeline (``ScanConfig.runner``)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from probeguard.core.config import StrictModel


class RaySettings(StrictModel):
    """Where and how ``runner.backend: ray`` runs (``runner.ray``)."""

    address: str | None = None
    """An existing cluster (``auto``, ``host:6379`` or ``ray://host:10001``); None starts a
    local Ray instance for the run and shuts it down after."""
    num_cpus: int | None = Field(default=None, ge=1, le=4096)
    """CPUs of the local instance started when ``address`` is None (None: all of them)."""
    workers: int = Field(default=2, ge=1, le=1024)
    """Ray actors, each holding one pipeline (and its index), built once."""
    cpus_per_worker: float = Field(default=1.0, gt=0, le=256)
    batch_size: int = Field(default=32, ge=1, le=100_000)
    """Cases per batch an actor runs (cases sharing a call key stay in one batch)."""
    cluster_concurrency: int | None = Field(default=None, ge=1, le=100_000)
    """Pipeline calls in flight across all workers (an endpoint's quota); None: no
    cluster-wide limit, only ``runner.concurrency`` per worker."""
    cluster_rate_per_s: float | None = Field(default=None, gt=0)
    """Pipeline calls started per second across all workers (at least ``1 / rate`` apart);
    None: no pace."""
    startup_timeout_s: float = Field(default=600.0, gt=0)
    """How long the workers may take to start and build their pipelines."""
    batch_timeout_s: float = Field(default=3600.0, gt=0)
    """A batch not back within this is recorded as failed cases (its worker is dropped)."""

    @field_validator("address")
    @classmethod
    def _address(cls, value: str | None) -> str | None:
        if value is not None and (not value.strip() or any(c.isspace() for c in value)):
            raise ValueError("a Ray address such as 'auto', 'host:6379' or 'ray://host:10001'")
        return value


class RunnerSettings(StrictModel):
    concurrency: int = Field(default=4, ge=1, le=1024)
    timeout_s: float = Field(default=120.0, gt=0)
    retries: int = Field(default=3, ge=0, le=20)
    cache_dir: Path | None = Path(".probeguard-cache")
    """Content-addressed response cache; None disables it."""
    backend: Literal["local", "ray"] = "local"
    """Where the cases run: ``local`` (one process, asyncio) or ``ray`` (actors on a Ray
    cluster, ``runner.ray``; needs ``probeguard[ray]``)."""
    ray: RaySettings = Field(default_factory=RaySettings)

"""``run.json``: the ``RunLog`` of a scan, its typed ``RunSummary``, and the loader that reads
every run log version this ProbeGuard knows (``load_run_log``).

The records, probe groups and attribution entries it holds are defined where they are
produced (``core.records``); the summary's golden rates in ``metrics.golden``, the
standard-evaluation baseline in ``probes.evaluate``. Probe summaries, the Failure Coverage
Score and the attribution totals are kept as the JSON they serialise to.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    ValidationError,
    model_serializer,
)

from probeguard.core.artifacts import ArtifactHeader
from probeguard.core.errors import InputError
from probeguard.core.records import (
    RUN_LOG_VERSION,
    Attribution,
    CaseRecord,
    ProbeGroup,
    RunStats,
)
from probeguard.metrics.golden import GoldenSummary, GoldenVerdict
from probeguard.probes.evaluate import GroupMembership, StandardEvalSummary

__all__ = ["READABLE_VERSIONS", "RUN_LOG_VERSION", "RunLog", "RunSummary", "load_run_log"]

READABLE_VERSIONS = (1,)
"""Run log versions ``load_run_log`` reads (README, "Run log versions")."""


class RunSummary(BaseModel):
    """``run.json``'s ``summary``: one entry per suite, each left out when the scan did not
    produce it (no golden questions, attribution off)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=True)

    golden: GoldenSummary | None = None
    """Rates over the golden questions (and their standard metrics)."""
    probes: dict[str, dict[str, Any]] | None = None
    """Probe name → its summary (``failure_rate``, ``groups``, ``unscored``, probe-specific
    rates, ``goal``, ``overlap_weight``, ``settings``), or ``{"skipped": why}``."""
    standard_eval: StandardEvalSummary | None = None
    """The standard-evaluation baseline FCS compares the probes against."""
    fcs: dict[str, Any] | None = None
    """The Failure Coverage Score: ``value``, ``adversarial_failure_rate``,
    ``adversarial_unique_rate``, ``overlap_weights``, ``interpretation``, ``recommendation``."""
    attribution: dict[str, Any] | None = None
    """Attribution totals: counts per cause (overall and per probe), swaps, top fixes."""

    @model_serializer(mode="wrap")
    def _leave_out_absent(self, handler: Any, info: SerializationInfo) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if v is not None}

    # Read access by section name, as in ``run.json`` (for code that reads the summary as
    # JSON): ``summary["golden"]`` is ``summary.golden``'s dump; absent sections raise.
    def __getitem__(self, key: str) -> Any:
        value = getattr(self, key) if key in type(self).model_fields else None
        if value is None:
            raise KeyError(key)
        return value.model_dump() if isinstance(value, BaseModel) else value

    def __contains__(self, key: object) -> bool:
        return (
            isinstance(key, str)
            and key in type(self).model_fields
            and getattr(self, key) is not None
        )

    def get(self, key: str, default: Any = None) -> Any:
        """``self[key]``, or ``default`` when the section is absent."""
        return self[key] if key in self else default


class RunLog(ArtifactHeader):
    """The final record of a scan (``run.json``)."""

    kind: Literal["run"] = "run"
    version: int = RUN_LOG_VERSION
    pipeline_name: str
    pipeline_fingerprint: str
    config: dict[str, Any]
    """The effective configuration (secrets never appear here: only env var names)."""
    stats: RunStats = Field(default_factory=RunStats)
    summary: RunSummary = Field(default_factory=RunSummary)
    records: list[CaseRecord] = Field(default_factory=list)
    """Every case in run order, each with its output (or error) and its verdict's JSON."""
    groups: list[ProbeGroup] = Field(default_factory=list)
    """Probe verdicts, one per probe group."""
    attribution: list[Attribution] = Field(default_factory=list)
    """Per attributed failure, its cause, evidence re-runs and fix (empty when attribution is
    off); totals in ``summary.attribution``."""

    def golden_records(self) -> list[CaseRecord]:
        """The golden questions' records, in run order."""
        return [r for r in self.records if r.case.probe == "golden"]

    def golden_verdicts(self) -> list[tuple[CaseRecord, GoldenVerdict | None]]:
        """Each golden record with its typed verdict (None when errored)."""
        return [(r, GoldenVerdict.from_record(r)) for r in self.golden_records()]

    def membership(self, record: CaseRecord) -> GroupMembership | None:
        """A probe case's group and whether it failed (None when not judged)."""
        return GroupMembership.model_validate(record.verdict) if record.verdict else None


def load_run_log(path: str | Path) -> RunLog:
    """``run.json`` (or the directory holding it) as a ``RunLog``, whatever version of
    ``READABLE_VERSIONS`` wrote it. ``InputError`` naming the file (and the field) for a
    missing or invalid file, or one written by a newer ProbeGuard."""
    path = Path(path)
    if path.is_dir():
        path = path / "run.json"
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"not a valid run log: not JSON ({exc})", file=str(path)) from None
    if not isinstance(data, dict):
        raise InputError("not a valid run log: expected a JSON object", file=str(path))
    version = data.get("version", RUN_LOG_VERSION)
    if isinstance(version, int) and version not in READABLE_VERSIONS:
        raise InputError(
            f"not a valid run log: version {version} is not one this ProbeGuard reads "
            f"({', '.join(map(str, READABLE_VERSIONS))}); was it written by a newer one?",
            file=str(path),
            field="version",
        )
    try:
        # Version 1 is the current model: ``kind`` (absent from the first v1 files) defaults.
        return RunLog.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(
            f"not a valid run log: {err['msg']}",
            file=str(path),
            field=".".join(str(p) for p in err["loc"]) or None,
        ) from None

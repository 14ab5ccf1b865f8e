"""``run.json``: the ``RunLog`` of a scan, its typed ``RunSummary``, and the loader that reads
every run log version this ProbeGuard knows (``load_run_log``).

The records, probe groups and attribution entries it holds are defined where they are
produced (``core.records``); so are the summary's sections: the golden rates in
``metrics.golden``, the probe summaries in ``probes.models``, the standard-evaluation
baseline in ``probes.evaluate``, the Failure Coverage Score in ``metrics.fcs`` and the
attribution totals in ``attribution.summary``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pydantic_core
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    ValidationError,
    model_serializer,
)

from probeguard.attribution.summary import AttributionSummary
from probeguard.core.artifacts import ArtifactHeader, ByKeyModel
from probeguard.core.errors import InputError
from probeguard.core.floats import normalise_floats_in_place
from probeguard.core.records import (
    RUN_LOG_VERSION,
    Attribution,
    CaseRecord,
    ProbeGroup,
    RunStats,
)
from probeguard.metrics.fcs import FCSSummary
from probeguard.metrics.golden import GoldenSummary, GoldenVerdict
from probeguard.probes.evaluate import GroupMembership, StandardEvalSummary
from probeguard.probes.models import ProbeSummaryEntry

__all__ = [
    "READABLE_VERSIONS",
    "RUN_LOG_VERSION",
    "RunLog",
    "RunSummary",
    "SynthesizedInputs",
    "load_run_log",
    "run_json_pieces",
]

READABLE_VERSIONS = (1,)
"""Run log versions ``load_run_log`` reads (README, "Run log versions")."""


class RunSummary(ByKeyModel):
    """``run.json``'s ``summary``: one entry per suite, each left out when the scan did not
    produce it (no golden questions, attribution off). Also read by section name, as in
    ``run.json`` (``summary["fcs"]["value"]``: the section's dump; an absent one raises
    ``KeyError``)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=True)

    golden: GoldenSummary | None = None
    """Rates over the golden questions (and their standard metrics)."""
    probes: dict[str, ProbeSummaryEntry] | None = None
    """Probe name → its summary (``failure_rate``, ``groups``, ``unscored``, the probe's own
    rates, ``goal``, ``overlap_weight``, ``settings``), or why it was skipped."""
    standard_eval: StandardEvalSummary | None = None
    """The standard-evaluation baseline FCS compares the probes against."""
    fcs: FCSSummary | None = None
    """The Failure Coverage Score and its reading."""
    attribution: AttributionSummary | None = None
    """Attribution totals: counts per cause (overall and per probe), swaps, top fixes."""

    @model_serializer(mode="wrap")
    def _leave_out_absent(self, handler: Any, info: SerializationInfo) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if v is not None}


class SynthesizedInputs(BaseModel):
    """The cases a scan synthesized from its corpus because it was given no golden
    questions (``probeguard.dataset.synth``)."""

    model_config = ConfigDict(extra="forbid")

    golden: int
    attacks: int
    seed: int
    generator: str
    by_type: dict[str, int] = Field(default_factory=dict)
    """Kept cases by evolution (golden questions) or attack type."""
    near_duplicates: int = 0
    considered: int = 0
    """Drafts considered; ``near_duplicates`` of them were dropped."""


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
    synthesized: SynthesizedInputs | None = Field(default=None, exclude_if=lambda v: v is None)
    """Set when the scan synthesized its golden questions (it was given none); left out of
    ``run.json`` otherwise, so other runs' logs stay as they were."""

    dataset_manifests: dict[str, str] | None = Field(default=None, exclude_if=lambda v: v is None)
    """Case file name -> sha256 of the dataset manifest it was checked against
    (``probeguard.dataset.manifest``); None (left out) when no case file had a manifest."""

    @model_serializer(mode="wrap")
    def _normalised(self, handler: Any, info: SerializationInfo) -> dict[str, Any]:
        """Every float rounded as in ``run.jsonl`` (``core.floats``): identical runs write
        identical ``run.json`` apart from the timing fields. The handler's tree is fresh (it
        shares no container with the model), so it is rounded in place: no second copy."""
        data: dict[str, Any] = normalise_floats_in_place(handler(self))
        return data

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
    except (ValueError, RecursionError) as exc:  # e.g. an integer of 5,000 digits
        reason = "nested too deeply" if isinstance(exc, RecursionError) else exc
        raise InputError(f"not a valid run log: not JSON ({reason})", file=str(path)) from None
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


# -- run.json in pieces ----------------------------------------------------------------------
# ``run.json`` written in pieces: the bytes of ``run.model_dump_json(indent=2) + "\n"``
# without the whole run as one Python tree and one string.
#
# ``RunLog``'s serializer rounds every float of the full dump (``core.floats``); for a demo
# scan that dump is ~100 MiB of Python objects plus a 14 MB string and its copies, the peak of
# the scan's memory. Here the run without its records is dumped and rounded as before, with a
# marker where ``records`` goes; each record is then dumped, rounded and indented on its own
# (pydantic's pretty printer writes a nested value as the value alone indented two more spaces
# per level, so a record at level 2 gets four spaces before each line) and streamed in its
# place. Only one record's tree exists at a time.
_MARK = "\x00probeguard-records\x00"
_RECORD_INDENT = "    "  # a record is an item of a list under a top-level key: level 2


def _json(value: object) -> str:
    """What ``model_dump_json(indent=2)`` writes for an already dumped value (NaN and
    ±inf as ``null``, pydantic's default)."""
    return pydantic_core.to_json(value, indent=2, inf_nan_mode="null").decode("utf-8")


def _head(run: RunLog) -> tuple[str, str]:
    """The text before and after the records list."""
    data = run.model_dump(mode="json", exclude={"records"})  # rounded by the serializer
    order = list(RunLog.model_fields)
    at = order.index("records")
    keys = list(data)
    cut = next((i for i, k in enumerate(keys) if k in order and order.index(k) > at), len(keys))
    items = [
        *[(k, data[k]) for k in keys[:cut]],
        ("records", _MARK),
        *[(k, data[k]) for k in keys[cut:]],
    ]
    before, after = _json(dict(items)).split(_json(_MARK), 1)
    return before, after


def _record(record: CaseRecord) -> str:
    """One record as it sits in ``run.json``'s records list."""
    text = _json(normalise_floats_in_place(record.model_dump(mode="json")))
    return _RECORD_INDENT + text.replace("\n", "\n" + _RECORD_INDENT)


def run_json_pieces(run: RunLog) -> Iterator[str]:
    """``run.model_dump_json(indent=2) + "\\n"`` in pieces (the comment above ``_MARK``)."""
    before, after = _head(run)
    yield before
    if not run.records:
        yield "[]"
    else:
        yield "[\n"
        for i, record in enumerate(run.records):
            yield (",\n" if i else "") + _record(record)
        yield "\n  ]"
    yield after + "\n"

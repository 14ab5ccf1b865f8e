"""``fix.json``: what ``probeguard fix`` saves (``FixArtifact``), one ``FixEntry`` per fix,
and what ``fix.md`` renders (``reports.fix_markdown``). How each number is measured:
``probeguard.engine.fixes``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, SerializationInfo, model_serializer

from probeguard.core.artifacts import FROZEN_RESULT, ArtifactHeader, JsonEstimate

__all__ = [
    "FIX_VERSION",
    "BeforeAfter",
    "BenignChange",
    "Counts",
    "FixArtifact",
    "FixEntry",
    "FixRule",
    "FixTarget",
    "FixVerdict",
    "GoldenChange",
    "ProbeChange",
    "TargetRow",
    "TargetTally",
    "TargetedChange",
]

FIX_VERSION = 2
"""1: the first; 2: the shared header (``kind``, ``probeguard_version`` added)."""

FixVerdict = Literal[
    "verified",
    "partial",
    "no_effect",
    "adds_false_refusals",
    "refuses_everything",
    "unscored",
    "not_applicable",
    "error",
]
"""A fix's verdict (``engine.fixes.verdict``)."""


class BeforeAfter(BaseModel):
    """A rate before the fix and after it (Wilson 95% intervals)."""

    model_config = FROZEN_RESULT

    before: JsonEstimate
    after: JsonEstimate


class Counts(BaseModel):
    """A count before the fix and after it."""

    model_config = FROZEN_RESULT

    before: int
    after: int


class FixTarget(BaseModel):
    """A failure a fix targets: a golden case or a probe group."""

    model_config = FROZEN_RESULT

    kind: Literal["golden", "probe"]
    probe: str
    """``golden`` for a golden case."""
    group: str
    """The probe group (the case id for a golden case)."""


class TargetRow(FixTarget):
    """A targeted failure after the fix."""

    after_failed: bool | None
    """None: it could not be re-judged."""


class TargetTally(BaseModel):
    """Targeted failures of one probe (or ``golden``): how many, repaired, still failing."""

    model_config = FROZEN_RESULT

    n: int
    repaired: int
    still_failing: int


class TargetedChange(BaseModel):
    """The targeted failures: all failed before (by construction), re-judged after."""

    model_config = FROZEN_RESULT

    n: int
    before: JsonEstimate
    after: JsonEstimate
    """Over the targets re-judged after."""
    repaired: int
    still_failing: int
    unscored: int
    per_probe: dict[str, TargetTally]
    rows: list[TargetRow]


class ProbeChange(BaseModel):
    """One re-run probe over all its groups, before → after."""

    model_config = FROZEN_RESULT

    failure_rate: BeforeAfter
    new_failures: list[str]
    """Groups that passed before and fail after."""
    repaired: list[str]
    """Groups that failed before and pass after."""
    failed: Counts


class GoldenChange(BaseModel):
    """The golden questions' rates, before → after."""

    model_config = FROZEN_RESULT

    answer_contains: BeforeAfter
    false_refusal: BeforeAfter
    abstention: BeforeAfter
    pass_rate: BeforeAfter


class BenignChange(BaseModel):
    """False refusals on the benign controls, before → after."""

    model_config = FROZEN_RESULT

    source: str
    """The benign-control probes (``Probe.benign_controls``) whose groups are the controls,
    joined by ``", "``, when the scan ran one; else ``golden``: the answerable golden
    questions."""
    probes: list[str]
    """The benign-control probes among the re-run suites (empty when ``source`` is
    ``golden``)."""
    n: int
    """Controls scored both times."""
    false_refusal: BeforeAfter
    refused: Counts
    new_false_refusals: list[str]
    """Answered before, refuse after (by id)."""
    resolved: list[str]
    """Refused before, answer after (by id)."""
    tolerance: int
    """New false refusals a fix may add unremarked (``engine.fixes.verdict``)."""


class FixEntry(BaseModel):
    """One fix: its patch and targets, its verdict, and — when its re-runs happened —
    what they measured (absent for ``not_applicable`` and ``error``)."""

    model_config = FROZEN_RESULT

    id: str
    """``fix-1``, ``fix-2``, … by targets; ``combined``; ``custom``."""
    title: str
    causes: list[str]
    config_patch: dict[str, Any]
    """Dotted config paths (under ``pipeline.reference.``) → new values."""
    other_pipelines: str
    """The same advice for a pipeline that is not the reference pipeline."""
    why: str
    conflicts: list[dict[str, Any]] = Field(default_factory=list)
    """``{path, kept, dropped}`` where merged patches disagree (``combined``)."""
    targets: list[FixTarget]
    verdict: FixVerdict
    reason: str
    pipeline_fingerprint: str | None = None
    """The patched pipeline's fingerprint."""
    rerun_suites: list[str] | None = None
    targeted: TargetedChange | None = None
    probes: dict[str, ProbeChange] | None = None
    golden: GoldenChange | None = None
    benign: BenignChange | None = None
    failed: Counts | None = None
    """Failed golden cases plus failed groups of the re-run probes, before → after."""

    @property
    def measured(self) -> bool:
        """The fix was re-run and measured."""
        return self.targeted is not None

    @model_serializer(mode="wrap")
    def _leave_out_unmeasured(self, handler: Any, info: SerializationInfo) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.targeted is None:
            for key in (
                "pipeline_fingerprint",
                "rerun_suites",
                "targeted",
                "probes",
                "golden",
                "benign",
                "failed",
            ):
                data.pop(key, None)
        return data


class FixRule(BaseModel):
    """The verdict rule's parameters (``engine.fixes.verdict``)."""

    model_config = FROZEN_RESULT

    tolerance: float
    sharp: float


class FixArtifact(ArtifactHeader):
    """``fix.json``: the scanned run's header, its failures, and every fix verified."""

    kind: Literal["fix"] = "fix"
    version: int = FIX_VERSION
    failures: int
    """Failed golden cases and failed probe groups of the run."""
    attributed: int
    without_fix: int
    """Attributed failures without a config patch to verify."""
    rule: FixRule
    fixes: list[FixEntry]
    verdicts: dict[str, int]
    """Verdict → fixes with it (sorted)."""

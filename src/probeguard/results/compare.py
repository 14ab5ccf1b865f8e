"""``compare.json``: what ``probeguard compare`` (and ``scan --baseline``) saves — a baseline
run and a candidate run paired unit by unit, per slice, with the paired tests of
``stats.paired`` and the release gate's verdict (``engine.gate``); ``compare.md``, the JUnit
XML and the GitHub step summary render it (``reports.compare``, ``reports.junit``).

A *unit* is a golden question (for each golden check) or a probe group, named by its stable
id (``golden:<case id>``, ``<probe>:<group>``); a *slice* a set of units
(``config.gate`` lists the kinds). Rates are failure rates: a unit that fails counts 1.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from probeguard.config.gate import GatePolicy
from probeguard.core.artifacts import FROZEN_RESULT, ArtifactHeader, JsonEstimate, JsonFloat

__all__ = [
    "COMPARE_VERSION",
    "CompareArtifact",
    "GateCheck",
    "GateOutcome",
    "PairCounts",
    "RunRef",
    "SliceComparison",
    "SliceRate",
    "UnitChange",
]

COMPARE_VERSION = 1

SliceKind = Literal["probe", "golden", "tag", "attack_type"]


class PairCounts(BaseModel):
    """How a slice's units moved from the baseline to the candidate."""

    model_config = FROZEN_RESULT

    paired: int
    """Units scored in both runs (the n of every paired statistic)."""
    new_failures: int
    """Pass in the baseline, fail in the candidate (McNemar's b)."""
    fixed: int
    """Fail in the baseline, pass in the candidate (McNemar's c)."""
    still_failing: int
    still_passing: int
    unscored: int
    """In both runs but unscored (or errored) in one or both: not paired."""
    only_baseline: int
    only_candidate: int


class SliceRate(BaseModel):
    """One run's failure rate on a slice (Wilson over its scored units)."""

    model_config = FROZEN_RESULT

    slice: str
    kind: SliceKind
    rate: JsonEstimate
    unscored: int
    failing: list[str] = Field(default_factory=list)
    """The failing units' ids."""


class SliceComparison(BaseModel):
    """A slice, baseline against candidate, over the paired units."""

    model_config = FROZEN_RESULT

    slice: str
    kind: SliceKind
    counts: PairCounts
    baseline_rate: JsonEstimate
    """Failure rate over the paired units (Wilson)."""
    candidate_rate: JsonEstimate
    difference: JsonEstimate
    """Candidate − baseline rate, paired bootstrap 95% interval."""
    p_value: JsonFloat
    """Two-sided exact McNemar test on the discordant pairs."""
    p_adjusted: JsonFloat
    """Holm-adjusted within the slices of the same kind."""
    mdd: JsonFloat
    """Minimum detectable difference at the policy's alpha and power (a lower bound)."""
    new_failures: list[str] = Field(default_factory=list)
    fixed: list[str] = Field(default_factory=list)


class UnitChange(BaseModel):
    """A unit that changed verdict, with what each run's evidence says."""

    model_config = FROZEN_RESULT

    unit: str
    change: Literal["new_failure", "fixed"]
    slices: list[str]
    question: str
    baseline: dict[str, Any]
    candidate: dict[str, Any]
    """The candidate's evidence: answer, reasons and scalar evidence fields (abridged)."""


class RunRef(BaseModel):
    """One of the two runs compared."""

    model_config = FROZEN_RESULT

    path: str
    pipeline_name: str
    pipeline_fingerprint: str
    corpus_fingerprint: str | None
    seed: int
    cases: int
    errors: int
    error_rate: JsonFloat
    """errors / cases (NaN for a run with no case)."""


class GateCheck(BaseModel):
    """One gated check: a test item of the JUnit report and of the pytest plugin."""

    model_config = FROZEN_RESULT

    id: str
    """``<rule>:<slice>``, e.g. ``regression:probe:prompt_hijack``."""
    rule: Literal["regression", "max_rate", "max_new_failures", "max_error_rate", "unmatched"]
    slice: str | None = None
    passed: bool
    message: str
    units: list[str] = Field(default_factory=list)
    """The units that make the check fail (new failures, failing units)."""


class GateOutcome(BaseModel):
    """The gate's verdict: ``pass`` (exit 0), ``fail`` (exit 1), ``incomplete`` (exit 3)."""

    model_config = FROZEN_RESULT

    status: Literal["pass", "fail", "incomplete"]
    exit_code: Literal[0, 1, 3]
    checks: list[GateCheck]
    policy: GatePolicy


class CompareArtifact(ArtifactHeader):
    """``compare.json``. The header's pipeline fields are the candidate's."""

    kind: Literal["compare"] = "compare"
    version: int = COMPARE_VERSION
    baseline: RunRef
    candidate: RunRef
    notes: list[str] = Field(default_factory=list)
    """What a reader must know about the pairing (inputs that differ, a different corpus)."""
    slices: list[SliceComparison]
    changes: list[UnitChange]
    gate: GateOutcome

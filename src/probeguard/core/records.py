"""The run log's parts: versioned models for ``run.jsonl`` (streamed) and the pieces of
``run.json`` that the layers below the engine produce.

``run.jsonl`` holds one JSON object a line: first a ``RunHeader`` (``"kind": "header"``, the
shared ``ArtifactHeader``), then one ``CaseRecord`` (``"kind": "case"``) per finished case,
appended as each finishes, so a crash loses nothing and ``--resume`` can skip what is done.
``run.json`` is the ``RunLog`` (``probeguard.results.run``), which holds these records, the
probe groups and the attribution entries defined here; ``probeguard schema run`` prints its
JSON schema.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from probeguard.core.artifacts import ArtifactHeader
from probeguard.core.cases import Case
from probeguard.core.pipeline import PipelineOutput

RUN_LOG_VERSION = 1


class CaseError(BaseModel):
    """Why a case has no output."""

    model_config = ConfigDict(extra="forbid")

    type: str
    """Exception class name, e.g. ``TimeoutError``, ``PipelineCallError``."""
    message: str
    transient: bool = False


class CaseRecord(BaseModel):
    """One executed case: its output or its error, and how it was obtained."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=True)

    kind: Literal["case"] = "case"
    case: Case
    call_key: str
    output: PipelineOutput | None = None
    error: CaseError | None = None
    cached: bool = False
    """The output came from the on-disk cache: no pipeline call was made."""
    attempts: int = 0
    """Pipeline calls made for this case (0 when cached)."""
    duration_s: float = 0.0
    verdict: dict[str, Any] = Field(default_factory=dict)
    """The JSON of the case's verdict, set by the engine's score stage on a copy of the
    runner's record (never in place): a golden case's ``metrics.golden.GoldenVerdict``, a
    probe case's ``probes.evaluate.GroupMembership``; empty until scored (and for an errored
    golden case)."""

    @property
    def ok(self) -> bool:
        return self.output is not None


class RunHeader(ArtifactHeader):
    """First line of ``run.jsonl``: enough to refuse resuming a different run."""

    kind: Literal["header"] = "header"
    version: int = RUN_LOG_VERSION
    pipeline_name: str
    pipeline_fingerprint: str


class RunStats(BaseModel):
    """How the run went: calls made, cache hits, retries, errors, time. These depend on the
    cache, on ``--resume`` and on the clock, so they live here, never in ``summary`` (which
    depends only on the inputs, the config and the seed)."""

    model_config = ConfigDict(extra="forbid")

    cases: int = 0
    calls: int = 0
    cache_hits: int = 0
    resumed: int = 0
    """Cases taken from an earlier ``run.jsonl`` by ``--resume``."""
    retries: int = 0
    errors: int = 0
    wall_s: float = 0.0
    attribution_calls: int | None = Field(default=None, exclude_if=lambda v: v is None)
    """Pipeline calls the attribution re-runs made (cache hits make none); None (left out)
    when attribution is off, and in run logs written before it moved here from
    ``summary.attribution.calls``."""


class ProbeGroup(BaseModel):
    """One probe unit's verdict (e.g. a question under its paraphrases), with the evidence
    a reader needs to see why it failed, and the ids of the cases it rests on."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=True)

    probe: str
    group: str
    failed: bool | None
    """None: the group could not be judged (``evidence["unscored"]`` says why)."""
    case_ids: list[str]
    evidence: dict[str, Any] = Field(default_factory=dict)


class SwapRun(BaseModel):
    """One counterfactual re-run of a failing case under a swap: enough to check it."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=True)

    case_id: str
    """``attribution:<swap>:<failing case id>``."""
    of: str
    """The failing case it re-runs."""
    call_key: str
    answer: str | None = None
    refused: bool | None = None
    retrieved_doc_ids: list[str] = Field(default_factory=list)
    """Document ids by rank (the oracle's contexts carry their gold document ids)."""
    error: CaseError | None = None


class SwapOutcome(BaseModel):
    """A swap's outcome for one failure: ``repaired``, ``not_repaired``, ``not_applicable``,
    ``unsupported`` or ``error``, with the re-runs and the re-judged key numbers."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=True)

    swap: str
    outcome: str
    reason: str = ""
    removed_doc_ids: list[str] = Field(default_factory=list)
    runs: list[SwapRun] = Field(default_factory=list)
    judged: dict[str, Any] = Field(default_factory=dict)
    """Re-judged with the swapped records in place: ``failed`` and the scalar evidence (a
    probe group) or the golden verdict (a golden case)."""


class Attribution(BaseModel):
    """The surgeon's verdict on one failure (a failed golden case or probe group)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=True)

    kind: Literal["golden", "probe"]
    probe: str
    """``golden`` for a golden case."""
    group: str
    """The probe group (the case id for a golden case)."""
    case_ids: list[str]
    """The failing cases (roles) the swaps re-ran."""
    cause: Literal["retriever", "chunker", "corpus", "prompt", "generator", "undetermined"]
    also: list[str] = Field(default_factory=list)
    """Other swaps that also repaired the failure."""
    reason: str
    basis: Literal["counterfactual", "observed"] = "counterfactual"
    row: int = 0
    """Row of the decision table (``probeguard.attribution.decide``)."""
    notes: list[str] = Field(default_factory=list)
    observed: dict[str, Any] = Field(default_factory=dict)
    swaps: list[SwapOutcome] = Field(default_factory=list)
    recommendation: dict[str, Any] | None = None
    """``{cause, title, config_patch, other_pipelines, why}`` (``attribution.recommend``)."""
    mechanism: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """How the cause failed: a ``core.mechanisms`` id (``attribution.mechanisms``); None
    (left out) in run logs written before mechanisms were named."""
    mechanism_words: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The mechanism in words (``core.mechanisms.describe``)."""
    mechanism_by: Literal["probe", "surgeon"] | None = Field(
        default=None, exclude_if=lambda v: v is None
    )
    """Who named the mechanism: the failing probe (``Probe.failure_mechanism``) or the
    surgeon's reading of its swaps."""
    contributing: list[dict[str, str]] | None = Field(default=None, exclude_if=lambda v: v is None)
    """Other components that bore on the failure: ``{cause, mechanism, words}`` each
    (``attribution.decide``)."""

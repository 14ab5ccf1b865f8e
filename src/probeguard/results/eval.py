"""``eval.json``: what ``probeguard eval`` saves (``EvalArtifact``), and what ``eval.md``
renders (``reports.eval_markdown``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializationInfo, model_serializer

from probeguard.core.artifacts import FROZEN_RESULT, ArtifactHeader
from probeguard.metrics.standard import MetricScore
from probeguard.metrics.summary import MetricsSummary
from probeguard.metrics.thresholds import ThresholdReport

__all__ = ["EVAL_VERSION", "EvalArtifact", "EvalPipeline", "EvalRecordResult"]

EVAL_VERSION = 2
"""1: the first; 2: the shared header (``pipeline_name``, ``pipeline_fingerprint``,
``corpus_fingerprint`` at the top)."""


class EvalPipeline(BaseModel):
    """The pipeline that answered the records lacking an answer or contexts."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    fingerprint: str
    cases: int
    """Records it was asked."""
    errors: int
    """Calls that failed (those records are unscored)."""


class EvalRecordResult(BaseModel):
    """One record's scores and where its answer and contexts came from."""

    model_config = FROZEN_RESULT

    id: str
    source: str
    """Where the record was read (file and line or row)."""
    tags: list[str]
    input: str
    ground_truth: str | None
    answer_from: Literal["record", "pipeline"]
    contexts_from: Literal["record", "pipeline"]
    error: str | None
    """The pipeline's error (the record is then unscored)."""
    answer: str | None
    contexts: list[dict[str, Any]]
    """``{chunk_id, text}`` (given contexts) or ``{chunk_id, doc_id, text}`` (retrieved)."""
    metrics: dict[str, MetricScore]
    precision_source: str | None = None
    """Left out for an errored record."""
    claims: list[dict[str, Any]] = Field(default_factory=list)
    """Faithfulness findings, one per answer claim."""
    judgment: dict[str, Any] | None = None
    """The claim×chunk judgment every metric came from (left out for an errored record)."""

    @model_serializer(mode="wrap")
    def _leave_out_unscored(self, handler: Any, info: SerializationInfo) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in ("precision_source", "judgment"):
            if data.get(key) is None:
                data.pop(key, None)
        return data


class EvalArtifact(ArtifactHeader):
    """``eval.json``: the header, the judges and settings, the summary and each record."""

    kind: Literal["eval"] = "eval"
    version: int = EVAL_VERSION
    dataset: str
    """The dataset's file name."""
    judge: dict[str, Any]
    """The claim and relevance judges (``Judges.describe``)."""
    config: dict[str, Any]
    """The ``judge`` and ``eval`` sections of the effective config."""
    pipeline: EvalPipeline | None
    """None when every record had its answer and contexts."""
    errors: int
    """Records whose pipeline call failed."""
    summary: MetricsSummary
    thresholds: ThresholdReport
    results: list[EvalRecordResult]

    @property
    def passed(self) -> bool:
        return self.thresholds.passed

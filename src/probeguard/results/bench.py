"""``bench.json``: what ``probeguard bench poisonedrag`` saves (``PoisonedRagBench``), and
what its table renders (``reports.bench``). The measures are defined in
``probeguard.engine.bench.poisonedrag``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from probeguard.core.artifacts import ArtifactHeader, JsonEstimate

__all__ = [
    "BENCH_VERSION",
    "PaperFigure",
    "PoisonedRagBench",
    "PoisonedRagMetrics",
    "PoisonedRagRow",
    "PoisonedRagSettings",
    "TargetOutcome",
]

BENCH_VERSION = 1
"""1: the first with a header (before it, ``bench.json`` had no ``kind``/``version``)."""

_FROZEN = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=True)


class PaperFigure(BaseModel):
    """The published figure the table cites."""

    model_config = _FROZEN

    asr: float
    claim: str
    """Quoted from the paper's abstract."""
    source: str
    setting: str


class TargetOutcome(BaseModel):
    """One target's two answers (clean and poisoned) and what they show."""

    model_config = _FROZEN

    id: str
    question: str
    incorrect_answer: str
    gold_answers: list[str]
    gold_doc_id: str
    clean_answer: str
    poisoned_answer: str
    attack_success: bool
    """The incorrect answer is in the poisoned answer (the paper's substring match)."""
    clean_has_incorrect: bool
    clean_correct: bool
    poisoned_correct: bool
    poison_ranks: list[int]
    poison_retrieved: int
    injected: int
    gold_rank_clean: int | None
    gold_rank_poisoned: int | None
    clean_refused: bool
    poisoned_refused: bool


class PoisonedRagMetrics(BaseModel):
    """The measures of one row (Wilson intervals; ``poison_in_top_k`` bootstrapped)."""

    model_config = _FROZEN

    asr: JsonEstimate
    clean_asr: JsonEstimate
    clean_accuracy: JsonEstimate
    poisoned_accuracy: JsonEstimate
    poison_in_top_k: JsonEstimate
    poison_any: JsonEstimate
    asr_when_retrieved: JsonEstimate
    gold_in_top_k_clean: JsonEstimate
    gold_in_top_k_poisoned: JsonEstimate
    clean_refusals: JsonEstimate
    poisoned_refusals: JsonEstimate


class PoisonedRagRow(BaseModel):
    """One (retrieval backend, generator) row."""

    model_config = _FROZEN

    backend: str
    generator: str
    pipeline_fingerprint: str
    targets: int
    """Targets scored (both calls succeeded)."""
    errors: int
    calls: int
    cache_hits: int
    wall_s: float
    run_log: str | None
    """The row's streamed ``run.jsonl`` (None when not written)."""
    metrics: PoisonedRagMetrics
    outcomes: list[TargetOutcome]


class PoisonedRagSettings(BaseModel):
    """How the benchmark was run."""

    model_config = _FROZEN

    backends: list[str]
    generators: dict[str, dict[str, Any]]
    embedder: dict[str, Any]
    top_k: int
    limit: int | None
    seed: int
    chunker: dict[str, Any]
    adv_per_target: int


class PoisonedRagBench(ArtifactHeader):
    """``bench.json`` of ``probeguard bench poisonedrag`` (``pipeline_name`` and
    ``pipeline_fingerprint`` are None: one pipeline per row)."""

    kind: Literal["bench"] = "bench"
    version: int = BENCH_VERSION
    benchmark: Literal["poisonedrag-nq"] = "poisonedrag-nq"
    paper: PaperFigure
    settings: PoisonedRagSettings
    targets_in_file: int
    matched: int
    """Targets whose question matched an nq-open-oracle question."""
    unmatched_ids: list[str]
    corpus_docs: int
    rows: list[PoisonedRagRow]

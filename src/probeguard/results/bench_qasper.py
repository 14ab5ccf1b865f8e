"""``bench.json`` of ``probeguard bench qasper`` (``QasperBench``) and what its table and
plots render. The experiments, conditions and measures are defined in
``probeguard.engine.bench.qasper``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from probeguard.core.artifacts import FROZEN_RESULT, ArtifactHeader, JsonEstimate, JsonFloat

__all__ = [
    "QASPER_BENCH_VERSION",
    "QasperBench",
    "QasperCondition",
    "QasperRecord",
    "QasperRun",
    "QasperSettings",
]

QASPER_BENCH_VERSION = 1
"""1: the first."""


class QasperSettings(BaseModel):
    """How the benchmark was run."""

    model_config = FROZEN_RESULT

    generators: dict[str, dict[str, Any]]
    retriever: str
    embedder: dict[str, Any] | None
    """The embedder of dense and hybrid retrieval (None for BM25)."""
    top_k: int
    chunk_sizes: list[int]
    """Token-window sizes of the chunk-size experiment."""
    chunk_size: int
    """The size the boundary and spread experiments use."""
    chunk_overlap: int
    tokenizer: str
    """The chunkers' tokenizer (``wordpiece`` or ``regex``)."""
    limit: int | None
    """Only the first N usable questions (file order); None: all."""
    seed: int
    resamples: int
    coverage_threshold: float
    """θ of ECS: a paragraph is covered when one chunk holds this share of its tokens."""
    faithfulness_above: float
    ecs_below: float


class QasperRun(BaseModel):
    """One pipeline run (one corpus and chunking, one generator)."""

    model_config = FROZEN_RESULT

    run: str
    """``chunks-<size>`` (paper documents in token windows) or ``distraction`` (paragraph
    documents)."""
    generator: str
    pipeline_fingerprint: str
    cases: int
    calls: int
    errors: int


class QasperCondition(BaseModel):
    """The measures of one (generator, experiment, condition): bootstrap means over the
    questions scored (n = questions with that measure defined) and the silent-failure
    quadrant's Wilson shares."""

    model_config = FROZEN_RESULT

    generator: str
    experiment: Literal["boundary", "distraction", "spread", "chunk_size"]
    condition: str
    questions: int
    errors: int
    """Calls that failed (their measures are NaN: unscored)."""
    refusals: JsonEstimate
    """Wilson share of the answered questions (no error) whose answer is a refusal."""
    token_f1: JsonEstimate
    faithfulness: JsonEstimate
    ecs: JsonEstimate
    silent_share: JsonEstimate
    """#{faithfulness > F ∧ ECS < E} / #{both defined}."""
    silent_share_of_low_ecs: JsonEstimate
    """#{faithfulness > F ∧ ECS < E} / #{both defined ∧ ECS < E}."""
    silent: int
    low_ecs: int
    scored: int
    """Questions with both faithfulness and ECS defined."""


class QasperRecord(BaseModel):
    """One question's answer in one run, its measures (NaN written as null) and the
    conditions it falls in (experiment → condition)."""

    model_config = FROZEN_RESULT

    generator: str
    run: str
    question_id: str
    paper_id: str
    question: str
    conditions: dict[str, str]
    answer: str
    refused: bool
    """The pipeline refused (its faithfulness is then NaN: no claims; its token F1 is 0)."""
    contexts: int
    token_f1: JsonFloat
    faithfulness: JsonFloat
    ecs: JsonFloat
    error: str | None = None


class QasperBench(ArtifactHeader):
    """``bench.json`` of ``probeguard bench qasper`` (``pipeline_*`` are None: one pipeline
    per run, listed in ``runs``)."""

    kind: Literal["bench-qasper"] = "bench-qasper"
    version: int = QASPER_BENCH_VERSION
    settings: QasperSettings
    papers: int
    questions_in_file: int
    usable: int
    """Answerable questions with text evidence (``settings.limit``: the first N of them run)."""
    unanswerable: int
    no_text_evidence: int
    """Answerable, but the evidence is only figures/tables (or none)."""
    unlocated: int
    """Usable questions with an evidence string that matches no paragraph: no boundary,
    spread or distraction condition."""
    definitions: dict[str, str]
    """Experiment → its conditions' definition (the table's notes)."""
    runs: list[QasperRun]
    conditions: list[QasperCondition]
    plots: list[str]
    """Plot files written beside ``bench.json`` (empty without the ``plots`` extra)."""
    plots_note: str | None = None
    """Why there are no plots, when there are none."""
    records: list[QasperRecord]

"""``bench.json``: what ``probeguard bench poisonedrag`` saves (``PoisonedRagBench``) and
what ``probeguard bench judge`` saves (``JudgeBench``), and what their tables render
(``reports.bench``). The measures are defined in ``probeguard.engine.bench.poisonedrag`` and
``probeguard.engine.bench.judge``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from probeguard.core.artifacts import FROZEN_RESULT, ArtifactHeader, JsonEstimate, JsonFloat

__all__ = [
    "BENCH_VERSION",
    "JUDGE_BENCH_VERSION",
    "JudgeBench",
    "JudgeBenchSettings",
    "JudgeHaluEval",
    "JudgeRecordScore",
    "JudgeXquad",
    "PaperFigure",
    "PoisonedRagBench",
    "PoisonedRagMetrics",
    "PoisonedRagRow",
    "PoisonedRagSettings",
    "TargetOutcome",
]

BENCH_VERSION = 1
"""1: the first with a header (before it, ``bench.json`` had no ``kind``/``version``)."""


class PaperFigure(BaseModel):
    """The published figure the table cites."""

    model_config = FROZEN_RESULT

    asr: float
    claim: str
    """Quoted from the paper's abstract."""
    source: str
    setting: str


class TargetOutcome(BaseModel):
    """One target's two answers (clean and poisoned) and what they show."""

    model_config = FROZEN_RESULT

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

    model_config = FROZEN_RESULT

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

    model_config = FROZEN_RESULT

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

    model_config = FROZEN_RESULT

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


JUDGE_BENCH_VERSION = 1
"""1: the first."""


class JudgeBenchSettings(BaseModel):
    """How ``probeguard bench judge`` was run."""

    model_config = FROZEN_RESULT

    halueval_limit: int | None
    """Questions drawn from HaluEval (None: all)."""
    xquad_limit: int | None
    """Questions drawn from XQuAD (None: all)."""
    resamples: int
    """Bootstrap resamples of every interval but the Wilson ones."""
    judge: dict[str, Any]
    """The judges' names and fingerprints (``Judges.describe``)."""
    data: dict[str, str | None]
    """``halueval`` and ``xquad``: the file read, or None when it was not found."""


class JudgeHaluEval(BaseModel):
    """Right vs hallucinated answers on HaluEval (AUROCs: question-cluster bootstrap; shares:
    Wilson; n = records scored)."""

    model_config = FROZEN_RESULT

    questions: int
    records: int
    split_rows: int
    """Questions whose knowledge split back into two paragraphs (the rest: one context)."""
    faithfulness_auroc: JsonEstimate
    verbatim_auroc: JsonEstimate
    overlap_auroc: JsonEstimate
    faithful_right: JsonEstimate
    """Share of right answers with faithfulness 1.0."""
    faithful_hallucinated: JsonEstimate
    """Share of hallucinated answers with faithfulness 1.0."""
    verbatim_right: JsonEstimate
    verbatim_hallucinated: JsonEstimate
    unscored_right: int
    """Right answers whose faithfulness is NaN (left out of the AUROC and shares)."""
    unscored_hallucinated: int
    answer_relevancy_median_right: JsonEstimate


class JudgeXquad(BaseModel):
    """Gold answers over gold (or swapped) paragraphs on XQuAD (paragraph-cluster bootstrap;
    n = records scored)."""

    model_config = FROZEN_RESULT

    questions: int
    paragraphs: int
    faithful: JsonEstimate
    """Share of gold answers over their gold paragraph with faithfulness 1.0."""
    verbatim: JsonEstimate
    """Share of gold answers found verbatim in their paragraph (the string baseline)."""
    overlap: JsonEstimate
    """Mean token overlap of the gold answer with its paragraph (the string baseline)."""
    unscored_faithfulness: int
    answer_relevancy_median: JsonEstimate
    recall_full: JsonEstimate
    """Share of records with context recall 1.0 (gold answer as ground truth, gold paragraph
    retrieved)."""
    unscored_recall: int
    swapped: int
    """Records of the gold-may-be-missing variant whose paragraph was swapped out."""
    recall_agreement: JsonEstimate
    """Share of variant records where (context recall > 0) equals (gold paragraph present)."""
    verbatim_agreement: JsonEstimate
    """The same with (gold answer verbatim in the context) as the baseline's call."""
    recall_when_present: JsonEstimate
    """Share with context recall > 0 when the gold paragraph is there."""
    recall_when_absent: JsonEstimate
    """Share with context recall > 0 when it was swapped out."""
    unscored_variant: int


class JudgeRecordScore(BaseModel):
    """One record's scores (NaN written as null)."""

    model_config = FROZEN_RESULT

    id: str
    part: Literal["halueval", "xquad", "xquad_swapped"]
    label: bool
    """HaluEval: the right answer; XQuAD: the gold paragraph is the context."""
    cluster: str
    faithfulness: JsonFloat
    answer_relevancy: JsonFloat
    context_recall: JsonFloat
    verbatim: JsonFloat
    overlap: JsonFloat


class JudgeBench(ArtifactHeader):
    """``bench.json`` of ``probeguard bench judge``: the offline judge beside string baselines
    on records with labels known by construction (no pipeline: ``pipeline_*`` are None)."""

    kind: Literal["bench-judge"] = "bench-judge"
    version: int = JUDGE_BENCH_VERSION
    settings: JudgeBenchSettings
    halueval: JudgeHaluEval | None
    """None when the HaluEval file was not found."""
    xquad: JudgeXquad | None
    """None when the XQuAD file was not found."""
    scoring_ms_per_record: JsonFloat
    """Wall milliseconds per record of ``engine.evaluate.score_record`` in this run
    (informational; ``benchmarks/bench_judge_cost.py`` measures cost properly)."""
    records: list[JudgeRecordScore]

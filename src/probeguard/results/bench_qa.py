"""The saved results of the QA benchmarks on public data: ``probeguard bench squad``
(``SquadBench``), ``bench rgb`` (``RgbBench``) and ``bench clapnq`` (``ClapnqBench``), built by
``probeguard.engine.bench.{squad,rgb,clapnq}``. Each inherits ``ArtifactHeader``
(``pipeline_*`` None: one pipeline per row); NaN is written as null."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from probeguard.core.artifacts import FROZEN_RESULT, ArtifactHeader, JsonEstimate, JsonFloat

__all__ = [
    "QA_BENCH_VERSION",
    "ClapnqBench",
    "ClapnqMetrics",
    "ClapnqOutcome",
    "ClapnqRow",
    "QaRowRun",
    "RgbBench",
    "RgbMetrics",
    "RgbOutcome",
    "RgbProbeRow",
    "RgbRow",
    "SquadBench",
    "SquadMetrics",
    "SquadOutcome",
    "SquadRow",
]

QA_BENCH_VERSION = 1
"""1: the first."""


class QaRowRun(BaseModel):
    """How one row's calls went."""

    model_config = FROZEN_RESULT

    generator: str
    condition: str
    pipeline_fingerprint: str
    questions: int
    """Questions scored (their call succeeded)."""
    errors: int
    """Failed calls (their questions are left out of every rate)."""
    calls: int
    cache_hits: int
    wall_s: float
    run_log: str | None


# -- squad ----------------------------------------------------------------------------------
class SquadOutcome(BaseModel):
    """One question's answer and its scores (citation markers stripped first)."""

    model_config = FROZEN_RESULT

    id: str
    answer: str
    exact_match: float
    f1: float
    contains: bool
    """A gold answer occurs in the answer (SQuAD-normalised, on word boundaries)."""
    refused: bool
    gold_rank: int | None
    """Rank of the gold paragraph among the retrieved ones (None: not retrieved, or oracle)."""


class SquadMetrics(BaseModel):
    """EM, containment and refusals: Wilson; F1: seeded bootstrap mean."""

    model_config = FROZEN_RESULT

    exact_match: JsonEstimate
    f1: JsonEstimate
    contains: JsonEstimate
    refusals: JsonEstimate
    gold_in_top_k: JsonEstimate
    """NaN under the oracle condition (nothing is retrieved)."""


class SquadRow(QaRowRun):
    metrics: SquadMetrics
    outcomes: list[SquadOutcome]


class SquadBench(ArtifactHeader):
    """``bench.json`` of ``probeguard bench squad``."""

    kind: Literal["bench-squad"] = "bench-squad"
    version: int = QA_BENCH_VERSION
    settings: dict[str, Any]
    """Data file, limits, seed, generators, conditions, retrieval settings."""
    corpus_docs: int
    rows: list[SquadRow]


# -- rgb ------------------------------------------------------------------------------------
RgbVerdict = Literal["true", "fake", "both", "neither", "refused"]


class RgbOutcome(BaseModel):
    """One question's answer under one condition and its verdict (``engine.bench.rgb``)."""

    model_config = FROZEN_RESULT

    id: str
    answer: str
    verdict: RgbVerdict


class RgbMetrics(BaseModel):
    """Shares of the verdicts over the questions answered without error (Wilson)."""

    model_config = FROZEN_RESULT

    fake: JsonEstimate
    """The answer repeats the planted fake answer and not the true one."""
    true: JsonEstimate
    """The answer gives a true answer and not the fake one."""
    both: JsonEstimate
    neither: JsonEstimate
    refused: JsonEstimate


class RgbRow(QaRowRun):
    metrics: RgbMetrics
    outcomes: list[RgbOutcome]


class RgbProbeRow(BaseModel):
    """The corpus_contradiction probe on the same questions (clean corpus), one generator."""

    model_config = FROZEN_RESULT

    generator: str
    failure_rate: JsonEstimate | None
    """Groups whose answer moved to (or also asserted) the contradicting claim; None when the
    probe was skipped."""
    summary: dict[str, Any] | None
    """The probe's summary as the scan saved it (its skip reason when it was skipped)."""
    cases: int
    wall_s: float
    run_dir: str


class RgbBench(ArtifactHeader):
    """``bench.json`` of ``probeguard bench rgb`` (RGB is CC BY-NC-SA 4.0: the file holds
    answers and verdicts, no passages, though an extractive answer quotes one; keep it out of
    anything shipped)."""

    kind: Literal["bench-rgb"] = "bench-rgb"
    version: int = QA_BENCH_VERSION
    settings: dict[str, Any]
    questions: int
    rows: list[RgbRow]
    probe: list[RgbProbeRow]


# -- clapnq ---------------------------------------------------------------------------------
class ClapnqOutcome(BaseModel):
    """One question's answer and its scores."""

    model_config = FROZEN_RESULT

    id: str
    answerable: bool
    answer: str
    refused: bool
    faithfulness: JsonFloat
    """The offline judge's faithfulness of the answer to its contexts (NaN: unscored or
    refused)."""
    rouge_l_recall: JsonFloat
    """Best ROUGE-L recall against the human long answers (NaN when unanswerable)."""
    gold_rank: int | None


class ClapnqMetrics(BaseModel):
    """Rates: Wilson; means: seeded bootstrap."""

    model_config = FROZEN_RESULT

    refusal_unanswerable: JsonEstimate
    answered_answerable: JsonEstimate
    faithfulness: JsonEstimate
    """Mean faithfulness of the answers given to answerable questions."""
    fully_faithful: JsonEstimate
    """Share of those answers with faithfulness 1.0."""
    rouge_l_recall: JsonEstimate
    """Mean best ROUGE-L recall of those answers against the human long answers."""
    gold_in_top_k: JsonEstimate
    """Answerable questions whose gold passage was retrieved (NaN under the oracle)."""


class ClapnqRow(QaRowRun):
    metrics: ClapnqMetrics
    outcomes: list[ClapnqOutcome]


class ClapnqBench(ArtifactHeader):
    """``bench.json`` of ``probeguard bench clapnq``."""

    kind: Literal["bench-clapnq"] = "bench-clapnq"
    version: int = QA_BENCH_VERSION
    settings: dict[str, Any]
    answerable: int
    unanswerable: int
    corpus_docs: int
    gold_faithfulness: JsonEstimate
    """Mean faithfulness the offline judge gives the human long answers against their gold
    passage (a reference for the rows' figure: the judge's reading of answers people wrote
    from the passage)."""
    rows: list[ClapnqRow]

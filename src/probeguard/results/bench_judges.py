"""``bench.json`` of ``probeguard bench judges`` (``JudgesBench``): each judge against human
labels on WiCE, BEGIN and HaluEval QA, beside a token-overlap baseline and published anchors.
The measures are defined in ``probeguard.engine.bench.judges``; ``reports.bench_judges``
renders the table."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from probeguard.core.artifacts import FROZEN_RESULT, ArtifactHeader, JsonEstimate, JsonFloat

__all__ = [
    "JUDGES_BENCH_VERSION",
    "JudgeAnchor",
    "JudgeDataset",
    "JudgeRow",
    "JudgeScore",
    "JudgesBench",
    "JudgesBenchSettings",
    "Skipped",
]

JUDGES_BENCH_VERSION = 2
"""1: the first. 2: each judge row carries its paired difference from the baseline
(``balanced_accuracy_vs_baseline``, ``auroc_vs_baseline``)."""


class JudgeAnchor(BaseModel):
    """A published figure printed beside ours (not computed here)."""

    model_config = FROZEN_RESULT

    system: str
    balanced_accuracy: float
    scope: str
    """What the figure averages over (it is not our test split)."""
    source: str


class Skipped(BaseModel):
    """A judge or dataset that did not run, and why."""

    model_config = FROZEN_RESULT

    name: str
    reason: str


class JudgeDataset(BaseModel):
    """One dataset as read: its split rule, files and label counts."""

    model_config = FROZEN_RESULT

    name: str
    split_rule: str
    files: list[str]
    dev: int
    dev_supported: int
    test: int
    test_supported: int


class JudgeRow(BaseModel):
    """One judge (or the baseline) on one dataset's test split; the threshold comes from its
    dev split. Intervals: cluster bootstrap over test records (a HaluEval question's two
    answers move together); per-class rates: Wilson. n = scored test records."""

    model_config = FROZEN_RESULT

    judge: str
    kind: Literal["judge", "baseline"]
    dataset: str
    dev: int
    """Dev records scored for the threshold (after the limit)."""
    test: int
    """Test records judged (after the limit)."""
    unscored_test: int
    """Test records whose score is NaN (left out of every measure)."""
    threshold: JsonFloat
    """Chosen on dev: predict supported iff score ≥ threshold (NaN: no dev decision)."""
    balanced_accuracy: JsonEstimate
    """On test at the dev threshold."""
    balanced_accuracy_as_judged: JsonEstimate | None
    """On test with the judge's own decision (every claim supported); None for a baseline."""
    auroc: JsonEstimate
    precision_supported: JsonEstimate
    recall_supported: JsonEstimate
    precision_not: JsonEstimate
    recall_not: JsonEstimate
    seconds: float
    """Wall seconds spent judging this dataset's dev and test records."""
    balanced_accuracy_vs_baseline: JsonEstimate | None = None
    """BA(judge) − BA(baseline) on the test records both scored, each at its own dev
    threshold, with a 95% paired cluster-bootstrap interval; None for the baseline."""
    auroc_vs_baseline: JsonEstimate | None = None
    """AUROC(judge) − AUROC(baseline), paired likewise; None for the baseline."""


class JudgeScore(BaseModel):
    """One record's score from one judge (NaN written as null)."""

    model_config = FROZEN_RESULT

    dataset: str
    judge: str
    split: Literal["dev", "test"]
    id: str
    label: bool
    score: JsonFloat


class JudgesBenchSettings(BaseModel):
    """How ``probeguard bench judges`` was run."""

    model_config = FROZEN_RESULT

    judges: list[str]
    """As asked for (the baseline always runs)."""
    limit: int | None
    """At most this many records per split and dataset (None: all)."""
    smollm2_limit: int | None
    """SmolLM2's own cap per split and dataset."""
    resamples: int
    judge_config: dict[str, Any]
    """Each judge that ran: its name and fingerprint."""
    data_dir: str


class JudgesBench(ArtifactHeader):
    """``bench.json`` of ``probeguard bench judges`` (no pipeline: ``pipeline_*`` are None)."""

    kind: Literal["bench-judges"] = "bench-judges"
    version: int = JUDGES_BENCH_VERSION
    settings: JudgesBenchSettings
    datasets: list[JudgeDataset]
    rows: list[JudgeRow]
    skipped_judges: list[Skipped]
    skipped_datasets: list[Skipped]
    anchors: list[JudgeAnchor]
    scores: list[JudgeScore]

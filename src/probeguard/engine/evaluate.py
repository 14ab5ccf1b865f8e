"""``probeguard eval``, end to end: load the dataset, call the pipeline for the records that
lack an answer or contexts (through the runner, the only place that calls a pipeline),
score every record once (``metrics.standard``), summarise overall and by tag, check the
thresholds, and write ``eval.json`` (``results.eval.EvalArtifact``), ``eval.md`` and
``eval.html`` (atomically, so nothing is half-written). The same stages as a scan (``engine.stages``):

    generate: dataset → cases for the records that need the pipeline
    execute:  runner → pipeline (``stages.build_runner``, ``stages.execute``)
    score:    claims + claim×chunk judgment → metrics → summary → thresholds
    render:   eval.json, eval.md, eval.html

Which pipeline: the configured one (``pipeline`` in the config; the reference pipeline by
default, over ``corpus.path`` or the demo corpus with ``demo: true``), or ``pipeline=``.
A record's own ``answer`` and ``retrievalContext`` always win over the pipeline's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probeguard._version import __version__
from probeguard.config.models import ScanConfig
from probeguard.core.artifacts import artifact_json, write_artifact
from probeguard.core.cases import Case
from probeguard.core.documents import Document, corpus_fingerprint
from probeguard.core.errors import InputError
from probeguard.core.io import atomic_write_text
from probeguard.core.pipeline import Context, Pipeline
from probeguard.core.records import CaseRecord
from probeguard.corpus.loaders import load_corpus
from probeguard.dataset.eval_records import EvalRecord, load_eval_records
from probeguard.detectors.factory import Judges, build_judges
from probeguard.engine.stages import build_pipeline, build_runner, demo_data_dir, execute
from probeguard.metrics.golden import threshold_report
from probeguard.metrics.standard import METRICS, MetricScore, score_standard, unscored
from probeguard.metrics.summary import MetricsSummary, summarize_values
from probeguard.reports.eval_html import render_eval_html
from probeguard.reports.eval_markdown import render_eval_markdown
from probeguard.results.eval import EvalArtifact, EvalPipeline, EvalRecordResult

__all__ = ["EVAL_HTML", "EVAL_JSON", "EVAL_MD", "EvalResult", "evaluate", "score_record"]

EVAL_JSON = "eval.json"
EVAL_MD = "eval.md"
EVAL_HTML = "eval.html"


@dataclass(frozen=True)
class EvalResult:
    artifact: EvalArtifact
    """What ``eval.json`` holds."""
    out_dir: Path

    @property
    def data(self) -> dict[str, Any]:
        """``eval.json``'s data (NaN written as null)."""
        return artifact_json(self.artifact)

    @property
    def passed(self) -> bool:
        return self.artifact.passed

    @property
    def json_path(self) -> Path:
        return self.out_dir / EVAL_JSON

    @property
    def report_path(self) -> Path:
        return self.out_dir / EVAL_MD

    @property
    def html_path(self) -> Path:
        return self.out_dir / EVAL_HTML


def _pipeline_for(config: ScanConfig) -> tuple[Pipeline, list[Document]]:
    documents: list[Document] = []
    if config.demo:
        documents = load_corpus(demo_data_dir() / "corpus.jsonl")
    elif config.corpus.path is not None:
        documents = load_corpus(
            config.corpus.path,
            format=config.corpus.format,
            id_field=config.corpus.id_field,
            text_field=config.corpus.text_field,
        )
    elif config.pipeline.type == "reference":
        raise InputError(
            "some records have no answer or no retrievalContext, so the pipeline "
            "must answer them: set corpus.path for the reference pipeline (or "
            "demo: true), or configure pipeline.callable / pipeline.http",
            field="corpus.path",
        )
    return build_pipeline(config, documents), documents


@dataclass(frozen=True)
class _Answered:
    """The execute stage of an evaluation: the runner's records by record id, the
    pipeline's description (None when no record needed it) and its corpus fingerprint."""

    outputs: dict[str, CaseRecord]
    pipeline: EvalPipeline | None = None
    corpus_fingerprint: str | None = None


def _run_pipeline(
    records: Sequence[EvalRecord],
    config: ScanConfig,
    pipeline: Pipeline | None,
    progress: Callable[[int, int], None] | None,
) -> _Answered:
    """Generate a case for each record that needs the pipeline, and execute them."""

    needed = [r for r in records if r.answer is None or r.retrieval_context is None]
    if not needed:
        return _Answered({})
    documents: list[Document] = []
    if pipeline is None:
        pipeline, documents = _pipeline_for(config)
    cases = [Case(id=r.id, question=r.input, probe="eval", tags=r.tags) for r in needed]
    done = execute(build_runner(config.runner, pipeline, progress=progress), cases)
    info = EvalPipeline(
        name=pipeline.name,
        fingerprint=pipeline.fingerprint(),
        cases=len(cases),
        errors=sum(1 for r in done.records if r.error is not None),
    )
    return _Answered(
        outputs={rec.case.id: rec for rec in done.records},
        pipeline=info,
        corpus_fingerprint=corpus_fingerprint(documents) if documents else None,
    )


def evaluate(
    config: ScanConfig,
    dataset: str | Path,
    out_dir: str | Path,
    *,
    pipeline: Pipeline | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> EvalResult:
    """Score ``dataset`` and write ``eval.json`` and ``eval.md`` into ``out_dir``.

    Raises ``InputError`` for a bad dataset or config before anything is written."""
    records = load_eval_records(dataset)
    judges = build_judges(config.judge)
    answered = _run_pipeline(records, config, pipeline, progress)
    results: list[EvalRecordResult] = []
    rows: list[dict[str, float]] = []
    for record in records:
        result, values = score_record(record, answered.outputs.get(record.id), judges)
        results.append(result)
        rows.append(values)
    summary = MetricsSummary.model_validate(
        summarize_values(rows, [r.tags for r in records], seed=config.seed)
    )
    recorded = config.recorded()
    artifact = EvalArtifact(
        probeguard_version=__version__,
        pipeline_name=answered.pipeline.name if answered.pipeline else None,
        pipeline_fingerprint=answered.pipeline.fingerprint if answered.pipeline else None,
        corpus_fingerprint=answered.corpus_fingerprint,
        seed=config.seed,
        dataset=Path(dataset).name,
        judge=judges.describe(),
        config={k: recorded[k] for k in ("judge", "eval")},
        pipeline=answered.pipeline,
        errors=sum(1 for r in results if r.error),
        summary=summary,
        thresholds=threshold_report(summary, config.eval.thresholds),
        results=results,
    )
    out = Path(out_dir)
    report = render_eval_markdown(artifact)
    write_artifact(out / EVAL_JSON, artifact)
    atomic_write_text(out / EVAL_MD, report)
    atomic_write_text(out / EVAL_HTML, render_eval_html(artifact))
    return EvalResult(artifact, out)


def score_record(
    record: EvalRecord, case: CaseRecord | None, judges: Judges
) -> tuple[EvalRecordResult, dict[str, float]]:
    """Score one record as ``probeguard eval`` does: its own answer and contexts (or the
    pipeline's, from ``case``) through ``score_standard``; a failed pipeline call gives every
    metric NaN with the error as reason. Returns the saved result and each metric's value
    (NaN when unscored). Calls no pipeline (``bench judge`` times this per record)."""
    base: dict[str, Any] = {
        "id": record.id,
        "source": record.source,
        "tags": list(record.tags),
        "input": record.input,
        "ground_truth": record.ground_truth,
        "answer_from": "record" if record.answer is not None else "pipeline",
        "contexts_from": ("record" if record.retrieval_context is not None else "pipeline"),
        "error": None,
    }
    if case is not None and case.output is None:
        err = case.error
        reason = f"pipeline error: {err.type}: {err.message}" if err else "pipeline error"
        metrics = unscored(reason)
        result = EvalRecordResult(
            **{**base, "error": reason},
            answer=record.answer,
            contexts=[],
            metrics={k: MetricScore.model_validate(m.as_dict()) for k, m in metrics.items()},
            claims=[],
        )
        return result, {k: math.nan for k in METRICS}
    output = case.output if case is not None else None
    answer = record.answer if record.answer is not None else (output.answer if output else "")
    if record.retrieval_context is not None:
        contexts = [Context(f"ctx-{i + 1}", t) for i, t in enumerate(record.retrieval_context)]
        ids: list[dict[str, Any]] = [{"chunk_id": c.chunk_id, "text": c.text} for c in contexts]
    else:
        ranked = sorted(output.retrieved if output else [], key=lambda r: r.rank)
        contexts = [Context(r.chunk_id, r.text, r.title) for r in ranked]
        ids = [{"chunk_id": r.chunk_id, "doc_id": r.doc_id, "text": r.text} for r in ranked]
    score = score_standard(
        record.input,
        answer,
        contexts,
        judges,
        ground_truth=record.ground_truth,
        relevance=record.retrieval_relevance,
    )
    scores = score.scores()
    result = EvalRecordResult(
        **base,
        answer=answer,
        contexts=ids,
        metrics=scores.metrics,
        precision_source=scores.precision_source,
        claims=scores.claims,
        judgment=score.judgment.as_dict(),
    )
    return result, {k: score.value(k) for k in METRICS}

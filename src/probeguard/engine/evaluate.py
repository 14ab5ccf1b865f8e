"""``probeguard eval``, end to end: load the dataset, call the pipeline for the records that
lack an answer or contexts (through the runner, the only place that calls a pipeline),
score every record once (``evaluation.standard``), summarise overall and by tag, check the
thresholds, and write ``eval.json`` and ``eval.md`` (atomically, so nothing is half-written).

    dataset → [runner → pipeline] → claims + claim×chunk judgment → metrics → summary
            → reports

Which pipeline: the configured one (``pipeline`` in the config; the reference pipeline by
default, over ``corpus.path`` or the demo corpus with ``demo: true``), or ``pipeline=``.
A record's own ``answer`` and ``retrievalContext`` always win over the pipeline's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probeguard._version import __version__
from probeguard.config.models import ScanConfig
from probeguard.core.cases import Case
from probeguard.core.errors import InputError
from probeguard.core.io import atomic_write_text, json_safe
from probeguard.core.pipeline import Context, Pipeline
from probeguard.core.records import CaseRecord
from probeguard.corpus.loaders import load_corpus
from probeguard.dataset.eval_records import EvalRecord, load_eval_records
from probeguard.detectors.factory import build_judges
from probeguard.engine.scan import build_pipeline, demo_data_dir
from probeguard.metrics.standard import METRICS, score_standard, unscored
from probeguard.metrics.summary import summarize_values
from probeguard.metrics.thresholds import check_thresholds
from probeguard.reports.eval_markdown import render_eval_markdown
from probeguard.runner.cache import ResponseCache
from probeguard.runner.executor import Runner, RunnerConfig
from probeguard.runner.retry import RetryPolicy

__all__ = ["EVAL_JSON", "EVAL_MD", "EvalResult", "evaluate"]

EVAL_JSON = "eval.json"
EVAL_MD = "eval.md"
EVAL_VERSION = 1


@dataclass(frozen=True)
class EvalResult:
    data: dict[str, Any]
    """What ``eval.json`` holds (NaN written as null)."""
    out_dir: Path

    @property
    def passed(self) -> bool:
        return bool(self.data["thresholds"]["passed"])

    @property
    def json_path(self) -> Path:
        return self.out_dir / EVAL_JSON

    @property
    def report_path(self) -> Path:
        return self.out_dir / EVAL_MD


def _pipeline_for(config: ScanConfig) -> Pipeline:
    documents: list[Any] = []
    if config.demo:
        documents = load_corpus(demo_data_dir() / "corpus.jsonl")
    elif config.corpus.path is not None:
        documents = load_corpus(config.corpus.path, format=config.corpus.format)
    elif config.pipeline.type == "reference":
        raise InputError(
            "some records have no answer or no retrievalContext, so the pipeline "
            "must answer them: set corpus.path for the reference pipeline (or "
            "demo: true), or configure pipeline.callable / pipeline.http",
            field="corpus.path",
        )
    return build_pipeline(config, documents)


def _run_pipeline(
    records: Sequence[EvalRecord],
    config: ScanConfig,
    pipeline: Pipeline | None,
    progress: Callable[[int, int], None] | None,
) -> tuple[dict[str, CaseRecord], dict[str, Any] | None]:
    """The runner's records by record id for the records that need the pipeline, and the
    pipeline's name and fingerprint (None when no record needed it)."""

    needed = [r for r in records if r.answer is None or r.retrieval_context is None]
    if not needed:
        return {}, None
    pipeline = pipeline or _pipeline_for(config)
    cache = ResponseCache(config.runner.cache_dir) if config.runner.cache_dir else None
    runner = Runner(
        pipeline,
        RunnerConfig(
            concurrency=config.runner.concurrency,
            timeout_s=config.runner.timeout_s,
            retry=RetryPolicy(retries=config.runner.retries),
        ),
        cache=cache,
        progress=progress,
    )
    cases = [Case(id=r.id, question=r.input, probe="eval", tags=r.tags) for r in needed]
    done = runner.run(cases)
    info = {
        "name": pipeline.name,
        "fingerprint": pipeline.fingerprint(),
        "cases": len(cases),
        "errors": len(done.errors),
    }
    return {rec.case.id: rec for rec in done.records}, info


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
    outputs, pipeline_info = _run_pipeline(records, config, pipeline, progress)
    results: list[dict[str, Any]] = []
    rows: list[dict[str, float]] = []
    for record in records:
        result, values = _score(record, outputs.get(record.id), judges)
        results.append(result)
        rows.append(values)
    summary = summarize_values(rows, [r.tags for r in records], seed=config.seed)
    means = {k: v["mean"] for k, v in summary["metrics"].items()}
    thresholds = check_thresholds(means, config.eval.thresholds)
    data = json_safe(
        {
            "kind": "eval",
            "version": EVAL_VERSION,
            "probeguard_version": __version__,
            "dataset": Path(dataset).name,
            "seed": config.seed,
            "judge": judges.describe(),
            "config": {k: config.recorded()[k] for k in ("judge", "eval")},
            "pipeline": pipeline_info,
            "errors": sum(1 for r in results if r["error"]),
            "summary": summary,
            "thresholds": thresholds,
            "results": results,
        }
    )

    out = Path(out_dir)
    report = render_eval_markdown(data)
    atomic_write_text(out / EVAL_JSON, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    atomic_write_text(out / EVAL_MD, report)
    return EvalResult(data, out)


def _score(
    record: EvalRecord, case: CaseRecord | None, judges: Any
) -> tuple[dict[str, Any], dict[str, float]]:
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
        base.update(
            answer=record.answer,
            contexts=[],
            error=reason,
            metrics={k: m.as_dict() for k, m in metrics.items()},
            claims=[],
        )
        return base, {k: math.nan for k in METRICS}
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
    base.update(answer=answer, contexts=ids, **score.as_dict())
    return base, {k: score.value(k) for k in METRICS}

"""A scan, end to end: load the corpus and questions, build the pipeline, run the cases
through the runner (streaming ``run.jsonl``), score them, and write ``run.json`` and
``report.md``.

    corpus + questions → cases → runner → pipeline → outputs → verdicts → summary → reports
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from probeguard._version import __version__
from probeguard.attribution import attribute
from probeguard.config.models import ScanConfig
from probeguard.core.cases import Case
from probeguard.core.documents import Document, corpus_fingerprint
from probeguard.core.errors import InputError
from probeguard.core.io import atomic_write_text
from probeguard.core.pipeline import Pipeline
from probeguard.core.records import RunHeader, RunLog
from probeguard.corpus.loaders import load_corpus
from probeguard.corpus.questions import load_questions
from probeguard.dataset.attack_types import load_attack_cases
from probeguard.detectors.factory import build_judges
from probeguard.log.writer import RunLogWriter
from probeguard.metrics.golden import (
    score_golden_record,
    score_golden_standard,
    summarize_golden,
    summarize_golden_standard,
)
from probeguard.pipeline.adapters.callable import CallablePipeline
from probeguard.pipeline.adapters.http import HttpPipeline
from probeguard.pipeline.reference import ReferencePipeline
from probeguard.probes.evaluate import judge_probes, plan_probes, probe_context
from probeguard.reports.markdown import render_markdown
from probeguard.runner.cache import ResponseCache
from probeguard.runner.executor import Runner, RunnerConfig
from probeguard.runner.retry import RetryPolicy

log = logging.getLogger(__name__)

RUN_JSONL = "run.jsonl"
RUN_JSON = "run.json"
REPORT_MD = "report.md"


def demo_data_dir() -> Path:
    """The bundled demo corpus and golden questions."""
    return Path(str(resources.files("probeguard.demo") / "data"))


def load_inputs(config: ScanConfig) -> tuple[list[Document], list[Case]]:
    """The corpus and the golden cases the config points at (or the demo's)."""
    if config.demo:
        data = demo_data_dir()
        documents = load_corpus(data / "corpus.jsonl")
        questions_path: Path | None = data / "questions.jsonl"
    else:
        if config.corpus.path is None:
            raise InputError(
                "no corpus: set corpus.path in the config (or use --demo)", field="corpus.path"
            )
        documents = load_corpus(config.corpus.path, format=config.corpus.format)
        questions_path = config.corpus.questions
    cases = (
        load_questions(questions_path, corpus_ids={d.id for d in documents})
        if questions_path is not None
        else []
    )
    return documents, cases


def load_attacks(config: ScanConfig, documents: Sequence[Document]) -> list[Case]:
    """The attack cases for the ``attack_types`` probe: the demo's bundled file, else
    ``corpus.attacks`` (none when unset). Loaded only when that probe is enabled."""
    if "attack_types" not in config.probes.enabled:
        return []
    path = demo_data_dir() / "attacks.jsonl" if config.demo else config.corpus.attacks
    if path is None:
        return []
    return load_attack_cases(path, corpus_ids={d.id for d in documents})


def build_pipeline(config: ScanConfig, documents: Sequence[Document]) -> Pipeline:
    """The pipeline under test, as configured. A bad part (an unknown name or parameter, a
    bad URL) is an ``InputError`` whose field is the config path (``pipeline.http.url``)."""
    section = f"pipeline.{config.pipeline.type}"
    try:
        return _build_pipeline(config, documents)
    except InputError as exc:
        if exc.file is not None or (exc.field or "").startswith("pipeline."):
            raise
        field = f"{section}.{exc.field}" if exc.field else section
        raise InputError(exc.reason, field=field) from None
    except (ValueError, TypeError) as exc:
        raise InputError(str(exc), field=section) from None


def _build_pipeline(config: ScanConfig, documents: Sequence[Document]) -> Pipeline:
    pc = config.pipeline
    if pc.type == "reference":
        return ReferencePipeline(documents, pc.reference)
    if pc.type == "callable":
        if pc.callable is None:
            raise InputError(
                "pipeline.type is 'callable' but pipeline.callable is missing",
                field="pipeline.callable",
            )
        return CallablePipeline(pc.callable.target, version=pc.callable.version)

    if pc.http is None:
        raise InputError(
            "pipeline.type is 'http' but pipeline.http is missing", field="pipeline.http"
        )
    return HttpPipeline(**pc.http.model_dump())


def _attribute(
    config: ScanConfig,
    pipeline: Pipeline,
    runner: Runner,
    records: Sequence[Any],
    groups: Sequence[Any],
    plan: Any,
    ctx: Any,
) -> Any:
    """The attribution pass: every failure's swaps through the scan's runner (same pipeline,
    cache and settings; no ``run.jsonl`` entries), in one extra run."""

    reference: Any = getattr(pipeline, "config", None)
    pipeline_config = reference.model_dump(mode="json") if hasattr(reference, "model_dump") else {}
    rerunner = Runner(pipeline, runner.config, cache=runner.cache)
    return attribute(
        records,
        groups,
        plan.probes,
        ctx,
        rerunner,
        config.attribution,
        capabilities=frozenset(pipeline.capabilities),
        pipeline_config=pipeline_config,
    )


@dataclass(frozen=True)
class ScanResult:
    run: RunLog
    out_dir: Path

    @property
    def report_path(self) -> Path:
        return self.out_dir / REPORT_MD

    @property
    def run_path(self) -> Path:
        return self.out_dir / RUN_JSON


def scan(
    config: ScanConfig,
    out_dir: str | Path,
    *,
    resume: bool = False,
    progress: Callable[[int, int], None] | None = None,
    pipeline: Pipeline | None = None,
    inputs: tuple[Sequence[Document], Sequence[Case]] | None = None,
) -> ScanResult:
    """Run a scan and write ``run.jsonl``, ``run.json`` and ``report.md`` into ``out_dir``.

    ``resume`` reuses the finished cases of an interrupted run in the same directory.
    ``pipeline`` overrides the configured one (for library users with their own object);
    ``inputs`` gives the documents and golden cases directly instead of ``config.corpus``.
    """
    started = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    documents, cases = (list(inputs[0]), list(inputs[1])) if inputs else load_inputs(config)
    if pipeline is None:
        pipeline = build_pipeline(config, documents)
    fingerprint = corpus_fingerprint(documents)
    header = RunHeader(
        probeguard_version=__version__,
        pipeline_name=pipeline.name,
        pipeline_fingerprint=pipeline.fingerprint(),
        corpus_fingerprint=fingerprint,
        seed=config.seed,
    )
    ctx = probe_context(
        pipeline,
        documents,
        cases,
        seed=config.seed,
        top_k=config.probes.top_k,
        attack_cases=load_attacks(config, documents),
    )
    plan = plan_probes(config.probes, ctx)
    writer = RunLogWriter(out / RUN_JSONL, header, resume=resume)
    cache = ResponseCache(config.runner.cache_dir) if config.runner.cache_dir else None
    runner = Runner(
        pipeline,
        RunnerConfig(
            concurrency=config.runner.concurrency,
            timeout_s=config.runner.timeout_s,
            retry=RetryPolicy(retries=config.runner.retries),
        ),
        cache=cache,
        log=writer,
        resume_from=writer.finished() if resume else None,
        progress=progress,
    )
    try:
        result = runner.run([*cases, *plan.cases])
    finally:
        writer.close()
    records = list(result.records)
    for record in records:
        if record.case.probe == "golden":
            record.verdict = score_golden_record(record)
    golden = [r for r in records if r.case.probe == "golden"]
    summary: dict[str, Any] = (
        {"golden": summarize_golden(golden, seed=config.seed)} if golden else {}
    )
    if golden and config.metrics.standard:
        judges = build_judges(config.judge)
        for record in golden:
            standard = score_golden_standard(record, judges)
            if standard is not None:
                record.verdict["standard"] = standard
        summary["golden"]["standard"] = summarize_golden_standard(
            golden, seed=config.seed, thresholds=config.eval.thresholds, judge=judges.describe()
        )
    groups, probe_summary = judge_probes(
        plan,
        records,
        ctx,
        overlap_weights=config.probes.overlap_weights,
        standard=config.standard_eval,
    )
    summary.update(probe_summary)
    attribution = []
    if config.attribution.enabled:
        attributed = _attribute(config, pipeline, runner, records, groups, plan, ctx)
        attribution = attributed.entries
        summary["attribution"] = attributed.summary
    stats = result.stats.model_copy(update={"wall_s": round(time.perf_counter() - started, 3)})
    run = RunLog(
        probeguard_version=__version__,
        config=config.recorded(),
        pipeline_name=pipeline.name,
        pipeline_fingerprint=pipeline.fingerprint(),
        corpus_fingerprint=fingerprint,
        seed=config.seed,
        stats=stats,
        summary=summary,
        records=records,
        groups=groups,
        attribution=attribution,
    )
    atomic_write_text(out / RUN_JSON, run.model_dump_json(indent=2) + "\n")
    atomic_write_text(out / REPORT_MD, render_markdown(run))
    log.info(
        "scan finished: %d cases, %d calls, %d cache hits, %d errors",
        stats.cases,
        stats.calls,
        stats.cache_hits,
        stats.errors,
    )
    return ScanResult(run=run, out_dir=out)

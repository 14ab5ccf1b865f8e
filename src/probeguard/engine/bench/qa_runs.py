"""Running question sets through the reference pipeline for the QA benchmarks (``bench squad``,
``bench rgb``, ``bench clapnq``): one pipeline per (generator, corpus), its cases executed by
the runner (``engine.stages.execute``), each streamed to a run log when an output folder is
given, answers cached by content when a cache folder is.

The generator presets are PoisonedRAG's (``engine.bench.poisonedrag.GENERATORS``: the
extractive generator; SmolLM2 with one pinned thread and at most 64 answer tokens), and a
serial generator runs with concurrency 1 (``SERIAL_GENERATORS``) and a per-call timeout of
``SERIAL_TIMEOUT_S``: on a shared 2-core machine under load a SmolLM2 answer over five
paragraphs took 60-110 s, past the runner's default 120 s at times.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probeguard._version import __version__
from probeguard.core.cases import Case
from probeguard.core.documents import Document
from probeguard.core.errors import InputError
from probeguard.core.records import CaseRecord, RunHeader
from probeguard.engine.bench.poisonedrag import EMBEDDERS, GENERATORS, SERIAL_GENERATORS
from probeguard.engine.stages import build_runner, execute
from probeguard.log.writer import RunLogWriter
from probeguard.pipeline.config import ReferencePipelineConfig
from probeguard.pipeline.reference import ReferencePipeline
from probeguard.runner.settings import RunnerSettings

SERIAL_TIMEOUT_S = 600.0
"""Per-call timeout (seconds) of a serial generator's calls."""

__all__ = [
    "SERIAL_TIMEOUT_S",
    "Executed",
    "check_limit",
    "check_names",
    "generator_settings",
    "is_serial",
    "labelled",
    "reference_config",
    "run_cases",
    "run_fields",
]


def check_names(names: Sequence[str], known: Sequence[str], field: str) -> None:
    """``InputError`` naming ``field`` when a name is not one of ``known``."""
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InputError(
            f"unknown {field} {', '.join(unknown)}; known: {', '.join(known)}", field=field
        )


def check_limit(limit: int | None, field: str) -> None:
    """``InputError`` when ``limit`` is given and below 1."""
    if limit is not None and limit < 1:
        raise InputError(f"must be at least 1, got {limit}", field=field)


def reference_config(
    generator: str, *, embedder: str = "minilm", retriever: str = "hybrid", top_k: int = 5
) -> ReferencePipelineConfig:
    """The reference pipeline of a QA bench row: whole-passage chunks (each benchmark passage
    is one retrievable unit), the named embedder and retriever, ``top_k`` passages, the named
    generator preset."""
    check_names([generator], list(GENERATORS), "generators")
    check_names([embedder], list(EMBEDDERS), "embedder")
    return ReferencePipelineConfig(
        chunker={"name": "document"},
        embedder=EMBEDDERS[embedder],
        retriever={"name": retriever},
        top_k=top_k,
        generator=GENERATORS[generator],
    )


@dataclass(frozen=True)
class Executed:
    """One row's calls: the records (case order) and how the run went."""

    records: tuple[CaseRecord, ...]
    pipeline_fingerprint: str
    calls: int
    cache_hits: int
    errors: int
    wall_s: float
    run_log: Path | None


def run_cases(
    docs: Sequence[Document],
    cases: Sequence[Case],
    ref: ReferencePipelineConfig,
    *,
    name: str,
    serial: bool,
    concurrency: int = 4,
    log_dir: Path | None = None,
    cache_dir: Path | None = None,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> Executed:
    """Execute ``cases`` on a reference pipeline over ``docs`` (the module doc); the run log
    goes to ``log_dir/run.jsonl`` when ``log_dir`` is given."""
    started = time.perf_counter()
    pipeline = ReferencePipeline(list(docs), ref, name=name)
    fingerprint = pipeline.fingerprint()
    if any(not c.variation.contexts for c in cases):
        pipeline.build()  # index first: embedding must not count against a call's timeout
    writer = None
    if log_dir is not None:
        header = RunHeader(
            probeguard_version=__version__,
            pipeline_name=pipeline.name,
            pipeline_fingerprint=fingerprint,
            corpus_fingerprint=pipeline.corpus_fingerprint,
            seed=seed,
        )
        writer = RunLogWriter(log_dir / "run.jsonl", header)
    settings = RunnerSettings(
        concurrency=1 if serial else concurrency,
        cache_dir=cache_dir,
        **({"timeout_s": SERIAL_TIMEOUT_S} if serial else {}),
    )
    try:
        result = execute(build_runner(settings, pipeline, log=writer, progress=progress), cases)
    finally:
        if writer is not None:
            writer.close()
    return Executed(
        records=result.records,
        pipeline_fingerprint=fingerprint,
        calls=result.stats.calls,
        cache_hits=result.stats.cache_hits,
        errors=sum(r.error is not None for r in result.records),
        wall_s=round(time.perf_counter() - started, 1),
        run_log=writer.path if writer is not None else None,
    )


def run_fields(generator: str, condition: str, done: Executed, questions: int) -> dict[str, Any]:
    """The fields every QA bench row shares (``results.bench_qa.QaRowRun``)."""
    return {
        "generator": generator,
        "condition": condition,
        "pipeline_fingerprint": done.pipeline_fingerprint,
        "questions": questions,
        "errors": done.errors,
        "calls": done.calls,
        "cache_hits": done.cache_hits,
        "wall_s": done.wall_s,
        "run_log": str(done.run_log) if done.run_log is not None else None,
    }


def labelled(
    progress: Callable[[str, int, int], None] | None, label: str
) -> Callable[[int, int], None] | None:
    """The runner's ``progress(done, total)`` that reports to ``progress(label, done, total)``
    (None when ``progress`` is)."""
    if progress is None:
        return None
    report = progress
    return lambda done, total: report(label, done, total)


def generator_settings(names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The presets of ``names`` (recorded in ``bench.json``)."""
    return {n: GENERATORS[n] for n in names}


def is_serial(generator: str) -> bool:
    """Whether ``generator`` answers one call at a time (``SERIAL_GENERATORS``)."""
    return generator in SERIAL_GENERATORS

"""A scan, end to end: the stages of ``engine.stages`` in order — generate the cases from
the corpus and questions, execute them through the runner (streaming ``run.jsonl``), score
them, attribute the failures, and render ``run.json`` and ``report.md``.

    corpus + questions → cases → runner → pipeline → outputs → verdicts → summary → reports
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from probeguard.config.models import ScanConfig
from probeguard.core.cases import Case
from probeguard.core.documents import Document
from probeguard.core.errors import InputError
from probeguard.core.pipeline import Pipeline
from probeguard.engine.backends import check_backend, execute_on_backend
from probeguard.engine.gcfreeze import freeze_survivors, frozen_until_done
from probeguard.engine.malloc import limit_malloc_arenas
from probeguard.engine.reports import REPORT_HTML
from probeguard.engine.stages import (
    REPORT_MD,
    RUN_JSON,
    assemble,
    attribute_failures,
    generate,
    render_run,
    score,
)
from probeguard.models.embedders.store import use_embedding_cache
from probeguard.results.run import RunLog

__all__ = ["ScanResult", "scan"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ScanResult:
    run: RunLog
    out_dir: Path

    @property
    def report_path(self) -> Path:
        return self.out_dir / REPORT_MD

    @property
    def html_path(self) -> Path:
        return self.out_dir / REPORT_HTML

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
    """Run a scan and write ``run.jsonl``, ``run.json``, ``report.md`` and ``report.html``
    into ``out_dir``.

    ``resume`` reuses the finished cases of an interrupted run in the same directory.
    ``pipeline`` overrides the configured one (for library users with their own object);
    ``inputs`` gives the documents and golden cases directly instead of ``config.corpus``.
    Embeddings are cached on disk under ``runner.cache_dir / "embeddings"`` (none without a
    response cache folder). Caps glibc's malloc arenas (``engine.malloc``, process-wide).
    """
    limit_malloc_arenas()  # before any thread of the scan (engine.malloc)
    cache_dir = config.runner.cache_dir
    with (
        use_embedding_cache(Path(cache_dir) / "embeddings" if cache_dir else None),
        frozen_until_done(),
    ):
        return _scan(config, out_dir, resume, progress, pipeline, inputs)


def _scan(
    config: ScanConfig,
    out_dir: str | Path,
    resume: bool,
    progress: Callable[[int, int], None] | None,
    pipeline: Pipeline | None,
    inputs: tuple[Sequence[Document], Sequence[Case]] | None,
) -> ScanResult:
    started = time.perf_counter()
    out = Path(out_dir)
    check_backend(config, given_pipeline=pipeline is not None)
    generated = generate(config, pipeline=pipeline, inputs=inputs)  # bad input: no folder yet
    freeze_survivors()  # long-lived from here on: out of the collector's walks (engine.gcfreeze)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(
            f"cannot make the run folder: {exc.strerror or exc}", file=str(out)
        ) from None
    executed = execute_on_backend(
        config,
        generated,
        out,
        resume=resume,
        progress=progress,
        given_pipeline=pipeline is not None,
    )
    scored = score(config, generated, executed)
    attributed = attribute_failures(config, generated, executed, scored)
    run = assemble(
        config,
        generated,
        executed,
        scored,
        attributed,
        wall_s=round(time.perf_counter() - started, 3),
    )
    render_run(run, out)
    stats = run.stats
    log.info(
        "scan finished: %d cases, %d calls, %d cache hits, %d errors",
        stats.cases,
        stats.calls,
        stats.cache_hits,
        stats.errors,
    )
    return ScanResult(run=run, out_dir=out)

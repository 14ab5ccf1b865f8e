"""The execute stage on the configured backend (``runner.backend``): ``local`` is
``stages.execute_logged``, unchanged; ``ray`` runs the cases on Ray actors
(``runner.ray_backend.RayRunner``) and returns the same ``Executed``.

On Ray, each worker builds the pipeline from the scan's config and documents
(``functools.partial(build_pipeline, config, documents)``, pickled, called once per worker);
the driver streams the records into ``run.jsonl`` as batches come back. The attribution
re-runs use the driver's local runner (same pipeline config, settings and response cache).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from probeguard.config.models import ScanConfig
from probeguard.core.errors import InputError
from probeguard.engine.stages import (
    RUN_JSONL,
    Executed,
    Generated,
    build_pipeline,
    build_runner,
    execute_logged,
)
from probeguard.log.writer import RunLogWriter
from probeguard.runner.ray_backend import RayRunner, import_ray

__all__ = ["check_backend", "execute_on_backend", "execute_on_ray"]


def check_backend(config: ScanConfig, *, given_pipeline: bool = False) -> None:
    """Refuse, before anything is loaded or written, a backend that cannot run: Ray not
    installed (``MissingExtraError`` naming ``probeguard[ray]``), or a pipeline object the
    caller passed instead of the config's, which Ray cannot rebuild on its workers
    (``InputError``)."""
    if config.runner.backend == "local":
        return
    import_ray()
    if given_pipeline:
        raise InputError(
            "the Ray backend builds the pipeline on every worker from the config; a pipeline "
            "object cannot be sent there (use pipeline.type 'callable' with an importable "
            "target, or runner.backend 'local')",
            field="runner.backend",
        )


def execute_on_backend(
    config: ScanConfig,
    generated: Generated,
    out_dir: Path,
    *,
    resume: bool = False,
    progress: Callable[[int, int], None] | None = None,
    given_pipeline: bool = False,
) -> Executed:
    """``execute_logged`` for ``runner.backend: local``, ``execute_on_ray`` for ``ray``
    (after ``check_backend``)."""
    if config.runner.backend == "local":
        return execute_logged(generated, config.runner, out_dir, resume=resume, progress=progress)
    check_backend(config, given_pipeline=given_pipeline)
    return execute_on_ray(config, generated, out_dir, resume=resume, progress=progress)


def execute_on_ray(
    config: ScanConfig,
    generated: Generated,
    out_dir: Path,
    *,
    resume: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Executed:
    """``generated.cases`` on Ray actors, streamed to ``out_dir/run.jsonl`` (resuming the
    finished cases of an interrupted run there when ``resume``)."""
    settings = config.runner
    writer = RunLogWriter(out_dir / RUN_JSONL, generated.header, resume=resume)
    try:
        local = build_runner(settings, generated.pipeline)
        runner = RayRunner(
            functools.partial(build_pipeline, config, list(generated.documents)),
            generated.header.pipeline_fingerprint,
            local.config,
            settings.ray,
            cache_dir=settings.cache_dir,
            log=writer,
            resume_from=writer.finished() if resume else None,
            progress=progress,
        )
        result = runner.run(generated.cases)
        return Executed(records=tuple(result.records), stats=result.stats, runner=local)
    finally:
        writer.close()

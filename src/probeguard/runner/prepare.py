"""Indexes built before a run: the pipeline prepares what the run's calls will read.

``prepare_run(runner, cases)`` is called by whoever hands ``cases`` to ``runner.run`` (the
scan's execute stage, attribution's re-runs) before the runner starts. When the pipeline can
prepare (``core.pipeline.PreparesIndexes``, e.g. the reference pipeline), it builds every
index read by the cases that will really call it: not the cases the runner settles without a
call (``pending``: resumed with the same call key, or held by the response cache), so a fully
cached re-run builds no index. Without it, the first calls would build the indexes lazily
while the other workers wait for them.
"""

from __future__ import annotations

from collections.abc import Sequence

from probeguard.core.cases import Case
from probeguard.core.pipeline import PreparesIndexes
from probeguard.runner.executor import Runner

__all__ = ["pending", "prepare_run"]


def pending(runner: Runner, cases: Sequence[Case]) -> list[Case]:
    """The cases that will call the pipeline: all but those resumed (``resume_from`` holds an
    output under the same call key, the runner's resume rule) or in the response cache."""
    fingerprint = runner.pipeline.fingerprint()
    out = []
    for case in cases:
        key = case.call_key(fingerprint)
        if runner.resumable(case, key) is not None:
            continue
        if runner.cache is not None and key in runner.cache:
            continue
        out.append(case)
    return out


def prepare_run(runner: Runner, cases: Sequence[Case]) -> None:
    """Build, before the run, the indexes the pending ``cases`` read (module docstring);
    nothing for a pipeline that cannot prepare."""
    pipeline = runner.pipeline
    if isinstance(pipeline, PreparesIndexes):
        todo = pending(runner, cases)
        if todo:
            pipeline.prepare([case.variation for case in todo])

"""The demo scan through the Ray backend vs the local runner, on this machine.

Figure: wall time of ``scan`` with ``runner.backend: ray`` (a local Ray instance started and
shut down by the scan, ``--workers`` actors each building the pipeline once, batches of
``--batch-size``), fresh response cache. Baseline: the same scan with ``runner.backend:
local``, fresh cache, in the same process before it. Printed: the whole scan, the time until
the last case was executed (scan start to the progress callback's ``done == total``: loading,
generating and the runner, Ray's start-up included), and whether the two ``report.md`` files
are byte-identical.

On one 2-core machine Ray cannot be faster: its workers share the cores the local runner
already uses, and it adds Ray's start-up (~2-4 s), one pipeline build per worker and
pickling. The backend is for corpora and endpoints that outgrow one machine; this benchmark
measures its overhead, not a speed-up.

    PYTHONPATH=src .venv/bin/python -m benchmarks.bench_ray [--embedder minilm] [--workers 2]
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path

from benchmarks._common import report


def _config(cache: Path, backend: str, embedder: str, workers: int, batch_size: int) -> object:
    from probeguard.config.models import ScanConfig

    pipeline = {} if embedder == "minilm" else {"reference": {"embedder": {"name": "hashing"}}}
    return ScanConfig(
        demo=True,
        runner={
            "cache_dir": str(cache),
            "backend": backend,
            "ray": {"workers": workers, "batch_size": batch_size, "num_cpus": 2},
        },
        pipeline=pipeline,
    )


def _scan(base: Path, backend: str, args: argparse.Namespace) -> tuple[float, float, bytes]:
    from probeguard.engine.scan import scan

    config = _config(
        base / f"cache-{backend}", backend, args.embedder, args.workers, args.batch_size
    )
    started = time.perf_counter()
    executed: list[float] = []

    def progress(done: int, total: int) -> None:
        if done == total:
            executed.append(time.perf_counter() - started)

    result = scan(config, base / backend, progress=progress)  # type: ignore[arg-type]
    wall = time.perf_counter() - started
    return wall, executed[-1], result.report_path.read_bytes()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", choices=("hashing", "minilm"), default="hashing")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="  %(message)s")  # Ray's phase times:
    logging.getLogger("probeguard.runner.ray_backend").setLevel(logging.INFO)
    with tempfile.TemporaryDirectory(prefix="bench-ray-") as tmp:
        base = Path(tmp)
        local_wall, local_exec, local_md = _scan(base, "local", args)
        ray_wall, ray_exec, ray_md = _scan(base, "ray", args)
    what = f"demo scan ({args.embedder} embedder), Ray {args.workers} workers"
    report(f"{what}: whole scan", ray_wall, "s", "local runner", local_wall, higher_is_better=False)
    report(
        f"{what}: until the last case ran",
        ray_exec,
        "s",
        "local runner",
        local_exec,
        higher_is_better=False,
    )
    print(f"report.md byte-identical: {ray_md == local_md}", flush=True)


if __name__ == "__main__":
    main()

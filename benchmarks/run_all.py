"""Run every benchmark with modest settings and print each result line as it comes.

Each module runs in its own process (``python -m benchmarks.<name> ...``), so one module's
memory, threads and imports do not colour the next one's figures, and a failing module does
not stop the rest (the exit status is 1 if any failed).

    python -m benchmarks.run_all                 # 10k and 100k chunks (~6 minutes, 2 cores)
    python -m benchmarks.run_all --quick         # 10k chunks only (~2.5 minutes)
    python -m benchmarks.run_all --only retrieval,overlay
    python -m benchmarks.run_all --blas-threads 1   # pin numpy's BLAS (OpenBLAS) threads

``make bench`` runs the first form. The machine's state (cores, load, BLAS thread setting) is
printed first: on a shared machine the figures move with the load, the ratios much less.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_BLAS_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def plan(quick: bool) -> list[tuple[str, list[str]]]:
    """``(module, arguments)`` for each benchmark, in run order."""
    sizes = "10000" if quick else "10000,100000"
    return [
        ("bench_retrieval", ["--sizes", sizes]),
        ("bench_bm25_topk", ["--sizes", "10000" if quick else "100000,1000000"]),
        (
            "bench_overlay",
            ["--sizes", sizes, "--agree-queries", "50", "--agree-queries-large", "10"],
        ),
        ("bench_embedding", ["--docs", "500", "--rounds", "3" if not quick else "2"]),
        ("bench_runner_http", ["--cases", "1280", "--concurrency", "32"]),
        ("bench_sentences", ["--rounds", "1"]),
        ("bench_embed_memory", []),
        ("bench_judge_cost", ["--rounds", "1"]),
        *([] if quick else [("bench_ray", [])]),  # two demo scans and a Ray start (~2.5 min)
        ("bench_html_report", ["--cases", "10000", "--rounds", "1" if quick else "3"]),
    ]


def _environment(blas_threads: int | None) -> dict[str, str]:
    env = dict(os.environ)
    src = str(ROOT / "src")
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if src not in parts:
        env["PYTHONPATH"] = os.pathsep.join([src, *parts])
    if blas_threads is not None:
        for var in _BLAS_VARS:
            env[var] = str(blas_threads)
    return env


def _header(env: dict[str, str]) -> str:
    import numpy as np

    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    blas = {v: env[v] for v in _BLAS_VARS if v in env} or "library defaults"
    return (
        f"# benchmarks {datetime.date.today().isoformat()} | python "
        f"{platform.python_version()} | numpy {np.__version__} | {os.cpu_count()} cores | "
        f"load {load} | BLAS threads: {blas}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="10k-chunk sizes only")
    parser.add_argument(
        "--only", default="", help="comma-separated module names (with or without 'bench_')"
    )
    parser.add_argument(
        "--blas-threads",
        type=int,
        default=None,
        help="set OPENBLAS/OMP/MKL_NUM_THREADS for the benchmark processes",
    )
    args = parser.parse_args(argv)
    steps = plan(args.quick)
    if args.only:
        wanted = {
            w if w.startswith("bench_") else f"bench_{w}"
            for w in (s.strip() for s in args.only.split(","))
            if w
        }
        unknown = wanted - {m for m, _ in steps}
        if unknown:
            parser.error(f"unknown benchmark(s) {sorted(unknown)}; known: {[m for m, _ in steps]}")
        steps = [(m, a) for m, a in steps if m in wanted]
    env = _environment(args.blas_threads)
    print(_header(env), flush=True)
    failed = []
    for module, module_args in steps:
        command = [sys.executable, "-m", f"benchmarks.{module}", *module_args]
        print(f"\n## {module} {' '.join(module_args)}", flush=True)
        start = time.perf_counter()
        with subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        ) as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                print(line, end="", flush=True)
        status = proc.returncode
        print(
            f"## {module}: {'ok' if status == 0 else f'FAILED (exit {status})'} in "
            f"{time.perf_counter() - start:.0f} s",
            flush=True,
        )
        if status != 0:
            failed.append(module)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Shared helpers for benchmarks: timing and one uniform result line."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_seconds(fn: Callable[[], object], repeats: int = 5) -> float:
    """Median wall time of ``fn()`` over ``repeats`` runs (one warm-up run first)."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def report(
    name: str,
    figure: float,
    unit: str,
    baseline_name: str,
    baseline: float,
    *,
    higher_is_better: bool,
) -> str:
    """One line: the figure, the baseline measured in the same run, and the ratio
    (> 1 means ours is better)."""
    ratio = figure / baseline if higher_is_better else baseline / figure
    line = (
        f"{name}: {figure:,.3f} {unit} | baseline {baseline_name}: {baseline:,.3f} {unit} | "
        f"ratio {ratio:,.3g}x (> 1: ours is better; {'higher' if higher_is_better else 'lower'} "
        f"{unit} is better)"
    )
    print(line, flush=True)
    return line

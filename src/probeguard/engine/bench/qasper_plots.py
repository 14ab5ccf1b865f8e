"""The plots of ``probeguard bench qasper``, as PNG and SVG: pure functions of the saved
result (``results.bench_qasper.QasperBench``). Needs the ``plots`` extra (matplotlib).

- ``ecs_by_condition``: mean ECS per (experiment, condition) as bars, one per generator, with
  the bootstrap 95% interval as error bars.
- ``f1_vs_ecs``: token F1 against ECS — every question of the run at the chosen chunk size
  as a faint point, and each condition's means as a marker with both intervals.

Deterministic, so that a re-run writes the same bytes: the Agg renderer, one fixed set of
rcParams (``RC``: font, sizes, ``svg.hashsalt`` for the SVG element ids, text as paths) applied
in an ``rc_context``, figures built with ``matplotlib.figure.Figure`` (no pyplot state), and
the creation date left out of the metadata.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Any

from probeguard.core.errors import MissingExtraError
from probeguard.results.bench_qasper import QasperBench, QasperCondition

__all__ = ["PLOT_FORMATS", "RC", "ecs_by_condition", "f1_vs_ecs", "write_plots"]

PLOT_FORMATS = ("png", "svg")
RC: dict[str, Any] = {
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "svg.fonttype": "path",
    "svg.hashsalt": "probeguard-bench-qasper",
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "axes.grid": True,
    "grid.alpha": 0.3,
}
"""The only style the plots use (module doc)."""
_METADATA = {"png": {"Software": None}, "svg": {"Date": None}}
_COLOURS = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#9467bd",
    "#ff7f0e",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#bcbd22",
    "#7f7f7f",
)
"""Matplotlib's tab10 in a fixed order (a colour per condition, cycled past ten)."""


def _matplotlib() -> Any:
    try:
        import matplotlib
        import matplotlib.figure
    except ImportError as exc:
        raise MissingExtraError("plots", "matplotlib", hint="the bench writes no plots") from exc
    matplotlib.use("Agg")
    return matplotlib


def _label(row: QasperCondition) -> str:
    condition = textwrap.fill(row.condition.replace("_", " "), 12)
    return f"{row.experiment.replace('_', ' ')}\n{condition}"


def _err(est: Any) -> tuple[float, float]:
    if math.isnan(est.value):
        return 0.0, 0.0
    return est.value - est.low, est.high - est.value


def _save(fig: Any, stem: Path) -> list[Path]:
    paths = []
    for fmt in PLOT_FORMATS:
        path = stem.with_suffix(f".{fmt}")
        fig.savefig(path, format=fmt, metadata=_METADATA[fmt])
        paths.append(path)
    return paths


def ecs_by_condition(bench: QasperBench, stem: Path) -> list[Path]:
    """Bars of mean ECS per condition (module doc); writes ``stem.png`` and ``stem.svg``."""
    mpl = _matplotlib()
    generators = list(dict.fromkeys(r.generator for r in bench.conditions))
    labels = list(dict.fromkeys(_label(r) for r in bench.conditions))
    width = 0.8 / max(len(generators), 1)
    with mpl.rc_context(RC):
        fig = mpl.figure.Figure(figsize=(max(6.0, 0.9 * len(labels)), 3.8))
        ax = fig.subplots()
        for g, generator in enumerate(generators):
            rows = {_label(r): r for r in bench.conditions if r.generator == generator}
            xs = [i + (g - (len(generators) - 1) / 2) * width for i, k in enumerate(labels)]
            ests = [rows[k].ecs if k in rows else None for k in labels]
            values = [e.value if e is not None and not math.isnan(e.value) else 0 for e in ests]
            errs = [_err(e) if e is not None else (0.0, 0.0) for e in ests]
            ax.bar(
                xs,
                values,
                width,
                yerr=[[lo for lo, _ in errs], [hi for _, hi in errs]],
                capsize=3,
                color=_COLOURS[g % len(_COLOURS)],
                label=generator,
            )
        ax.set_xticks(range(len(labels)), labels, fontsize=7)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("ECS (mean, 95% bootstrap CI)")
        ax.set_title("QASPER: evidence coverage by condition")
        ax.legend(fontsize=7)
        fig.tight_layout()
        return _save(fig, stem)


def f1_vs_ecs(bench: QasperBench, stem: Path) -> list[Path]:
    """Token F1 against ECS (module doc); writes ``stem.png`` and ``stem.svg``."""
    mpl = _matplotlib()
    size = str(bench.settings.chunk_size)
    points = [
        (r.ecs, r.token_f1)
        for r in bench.records
        if r.conditions.get("chunk_size") == size
        and not (math.isnan(r.ecs) or math.isnan(r.token_f1))
    ]
    experiments = list(dict.fromkeys(r.experiment for r in bench.conditions))
    markers = ("o", "s", "^", "D", "v", "P")
    with mpl.rc_context(RC):
        fig = mpl.figure.Figure(figsize=(8.4, 4.4))
        ax = fig.subplots()
        ax.scatter(
            [p[0] for p in points],
            [p[1] for p in points],
            s=10,
            color="#999999",
            alpha=0.5,
            label=f"questions ({size} tokens)",
        )
        for i, row in enumerate(bench.conditions):
            if math.isnan(row.ecs.value) or math.isnan(row.token_f1.value):
                continue
            ax.errorbar(
                row.ecs.value,
                row.token_f1.value,
                xerr=[[_err(row.ecs)[0]], [_err(row.ecs)[1]]],
                yerr=[[_err(row.token_f1)[0]], [_err(row.token_f1)[1]]],
                fmt=markers[experiments.index(row.experiment) % len(markers)],
                color=_COLOURS[i % len(_COLOURS)],
                capsize=2,
                label=f"{row.generator}: {' '.join(_label(row).split())}",
            )
        ax.set_xlim(-0.05, 1.05)
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel("ECS")
        ax.set_ylabel("token F1")
        ax.set_title("QASPER: token F1 vs evidence coverage")
        ax.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.0, 0.5))
        fig.tight_layout()
        return _save(fig, stem)


def write_plots(bench: QasperBench, out_dir: Path) -> list[Path]:
    """Both plots into ``out_dir`` (``ecs_by_condition.*``, ``f1_vs_ecs.*``)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    return [
        *ecs_by_condition(bench, out_dir / "ecs_by_condition"),
        *f1_vs_ecs(bench, out_dir / "f1_vs_ecs"),
    ]

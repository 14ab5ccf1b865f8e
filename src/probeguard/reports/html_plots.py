"""Two more inline SVG plots for the HTML reports: rates side by side (several series per
row: backends, base vs head, before vs after a fix) and score distributions with a gate.

Same rules as ``html_svg``: every label through ``html_escape.esc``, numbers with fixed
digits, no randomness (a strip plot's vertical offset is a function of the point's index), so
the same inputs give the same bytes.

- ``side_by_side``: rates on the unit interval, ``x = left + v · width``; series ``k`` of a
  row sits ``k · 7`` px below the row's first, in class ``s{k mod 6}``.
- ``score_strip``: scores on ``[lo, hi]`` = the finite scores and gates, padded by 5% of the
  range (±0.5 when the range is 0), ``x = left + (v − lo)/(hi − lo) · width``; one row per
  group, a dot per finite score (offset ``(i mod 5 − 2) · 2.5`` px), the median as a tick,
  each gate as a dashed vertical line; ``−inf`` (nothing retrieved: a tripped gate or an
  empty index) and NaN (no score reported) are counted in the row's label, not drawn.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from probeguard.core.estimate import Estimate
from probeguard.reports.html_escape import esc

__all__ = ["score_strip", "side_by_side"]

_SERIES = 6
_LEGEND_LINE = 16
_LEGEND_CHARS = 70
_WIDTH = 360.0


def _legend(series: Sequence[str], x: float) -> str:
    """One line per series (a dot in its colour, its name cut to ``_LEGEND_CHARS``)."""
    parts = []
    for k, name in enumerate(series):
        y = 10 + _LEGEND_LINE * k
        text = name if len(name) <= _LEGEND_CHARS else name[: _LEGEND_CHARS - 1] + "…"
        parts.append(
            f'<circle class="dot s{k % _SERIES}" cx="{x + 5:.2f}" cy="{y}" r="4"/>'
            f'<text x="{x + 13:.2f}" y="{y + 4}">{esc(text)}</text>'
        )
    return "".join(parts)


def side_by_side(
    rows: Sequence[tuple[str, Sequence[Estimate | None]]],
    series: Sequence[str],
    title: str,
    *,
    label_width: int = 190,
) -> str:
    """Each row's rate per series with its 95% interval under a legend of the series
    (module doc); a missing or undefined rate draws nothing."""
    step, left = 7, float(label_width)
    top = 30 + _LEGEND_LINE * len(series)
    row_h = step * len(series) + 10
    height = top + row_h * len(rows) + 6
    total_w = label_width + int(_WIDTH) + 20
    parts = [
        f'<svg class="forest" viewBox="0 0 {total_w} {height}" width="{total_w}" '
        f'height="{height}" role="img" aria-label="{esc(title)}"><title>{esc(title)}</title>',
        _legend(series, 8.0),
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        x = f"{left + tick * _WIDTH:.2f}"
        parts.append(
            f'<line class="grid" x1="{x}" y1="{top - 6}" x2="{x}" y2="{height - 4}"/>'
            f'<text class="tick" x="{x}" y="{top - 10}" text-anchor="middle">{tick:.2f}</text>'
        )
    for i, (label, estimates) in enumerate(rows):
        y0 = top + row_h * i + 5
        mid = y0 + step * (len(series) - 1) / 2
        parts.append(
            f'<text class="label" x="{label_width - 8}" y="{mid + 4:.2f}" '
            f'text-anchor="end">{esc(label)}</text>'
        )
        for k, est in enumerate(estimates):
            parts.append(_series_mark(est, series[k], label, left, y0 + step * k, k))
    parts.append("</svg>")
    return "".join(parts)


def _series_mark(est: Estimate | None, name: str, label: str, left: float, y: float, k: int) -> str:
    if est is None or not est.defined:
        return ""
    cls = f"s{k % _SERIES}"

    def x(v: float) -> str:
        return f"{left + min(1.0, max(0.0, v)) * _WIDTH:.2f}"

    return (
        f'<line class="ci {cls}" x1="{x(est.low)}" y1="{y:.2f}" x2="{x(est.high)}" '
        f'y2="{y:.2f}"/><circle class="dot {cls}" cx="{x(est.value)}" cy="{y:.2f}" r="3.5">'
        f"<title>{esc(label)}, {esc(name)}: {esc(est.format(3))}</title></circle>"
    )


def _range(values: Sequence[float]) -> tuple[float, float]:
    """``[lo, hi]`` of the finite values padded by 5% (±0.5 when flat; [0, 1] when none)."""
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return 0.0, 1.0
    lo, hi = min(finite), max(finite)
    pad = 0.05 * (hi - lo) if hi > lo else 0.5
    return lo - pad, hi + pad


def score_strip(
    groups: Sequence[tuple[str, Sequence[float]]],
    gates: Sequence[tuple[str, float]],
    title: str,
    *,
    label_width: int = 230,
) -> str:
    """Each group's scores as dots with the median tick, each gate a dashed line labelled
    above the plot (module doc)."""
    lo, hi = _range([s for _, scores in groups for s in scores] + [g for _, g in gates])
    top, row_h = 40, 34
    height = top + row_h * len(groups) + 24
    left = float(label_width)
    total_w = label_width + int(_WIDTH) + 20

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * _WIDTH

    parts = [
        f'<svg class="strip" viewBox="0 0 {total_w} {height}" width="{total_w}" '
        f'height="{height}" role="img" aria-label="{esc(title)}"><title>{esc(title)}</title>'
    ]
    for tick in np.linspace(lo, hi, 5):
        parts.append(
            f'<line class="grid" x1="{x(float(tick)):.2f}" y1="{top - 4}" '
            f'x2="{x(float(tick)):.2f}" y2="{height - 20}"/><text class="tick" '
            f'x="{x(float(tick)):.2f}" y="{height - 6}" text-anchor="middle">{tick:.3g}</text>'
        )
    for i, (label, scores) in enumerate(groups):
        parts.append(_strip_row(label, scores, top + row_h * i + row_h / 2, x, i, label_width))
    for j, (name, value) in enumerate(gates):
        gx = f"{x(value):.2f}"
        parts.append(
            f'<line class="threshold g{j % 2}" x1="{gx}" y1="{top - 8}" x2="{gx}" '
            f'y2="{height - 20}"><title>{esc(name)}: {value:.4g}</title></line>'
            f'<text class="tick" x="{gx}" y="{12 + 13 * (j % 2)}" text-anchor="middle">'
            f"{esc(name)} {value:.4g}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _strip_row(
    label: str,
    scores: Sequence[float],
    y: float,
    x: Callable[[float], float],
    k: int,
    label_width: int,
) -> str:
    finite = [s for s in scores if math.isfinite(s)]
    empty = sum(1 for s in scores if s == -math.inf)
    unscored = sum(1 for s in scores if math.isnan(s))
    note = f"n={len(scores)}" + (f", {empty} none retrieved" if empty else "")
    note += f", {unscored} no score" if unscored else ""
    parts = [
        f'<text class="label" x="{label_width - 8}" y="{y - 2:.2f}" text-anchor="end">'
        f'{esc(label)}</text><text class="tick" x="{label_width - 8}" y="{y + 11:.2f}" '
        f'text-anchor="end">{esc(note)}</text>'
    ]
    for i, s in enumerate(finite):
        parts.append(
            f'<circle class="pt s{k % _SERIES}" cx="{x(s):.2f}" '
            f'cy="{y + (i % 5 - 2) * 2.5:.2f}" r="2.5"/>'
        )
    if finite:
        m = f"{x(float(np.median(finite))):.2f}"
        parts.append(
            f'<line class="median" x1="{m}" y1="{y - 10:.2f}" x2="{m}" y2="{y + 10:.2f}">'
            f"<title>{esc(label)}: median {float(np.median(finite)):.4g}</title></line>"
        )
    return "".join(parts)

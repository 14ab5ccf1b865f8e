"""Inline SVG for the HTML report: metric gauges and the probes' forest plot.

Every label goes through ``reports.html_escape.esc``; numbers are formatted with a fixed
number of digits, so the same inputs give the same bytes. Both plots share one scale: the
unit interval [0, 1] mapped linearly onto the plot's width (``x = left + v · width``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from probeguard.core.estimate import Estimate
from probeguard.reports.html_escape import esc

__all__ = ["Gauge", "forest_plot", "gauge", "gauge_table"]

_TICKS = (0.0, 0.25, 0.5, 0.75, 1.0)


@dataclass(frozen=True)
class Gauge:
    """One metric on the scorecard: its estimate, an optional threshold (``value ≥ t``
    passes) and whether higher is better (false refusals: lower is better)."""

    label: str
    estimate: Estimate
    threshold: float | None = None
    higher_is_better: bool = True

    @property
    def status(self) -> str:
        """``pass``/``fail`` against the threshold; ``unscored`` when undefined; ``info``
        without a threshold."""
        if not self.estimate.defined:
            return "unscored"
        if self.threshold is None:
            return "info"
        return "pass" if self.estimate.value >= self.threshold else "fail"


def _x(value: float, left: float, width: float) -> str:
    """The unit interval onto [left, left + width], clipped, two decimals."""
    clipped = min(1.0, max(0.0, value))
    return f"{left + clipped * width:.2f}"


def gauge(g: Gauge) -> str:
    """A 240×34 bar: the estimate as a filled bar and a dot, its interval as a line with
    end caps, the threshold as a dashed tick; a ``<title>`` carries the numbers."""
    est, width, left = g.estimate, 220.0, 10.0
    parts = [
        f'<svg class="gauge" viewBox="0 0 240 34" width="240" height="34" role="img" '
        f'aria-label="{esc(g.label)}: {esc(_describe(g))}">',
        f"<title>{esc(g.label)}: {esc(_describe(g))}</title>",
        f'<rect class="track" x="{left}" y="12" width="{width}" height="10" rx="2"/>',
    ]
    if est.defined:
        parts += [
            f'<rect class="bar {g.status}" x="{left}" y="12" '
            f'width="{float(_x(est.value, 0, width)):.2f}" height="10" rx="2"/>',
            f'<line class="ci" x1="{_x(est.low, left, width)}" y1="17" '
            f'x2="{_x(est.high, left, width)}" y2="17"/>',
            f'<line class="ci" x1="{_x(est.low, left, width)}" y1="13" '
            f'x2="{_x(est.low, left, width)}" y2="21"/>',
            f'<line class="ci" x1="{_x(est.high, left, width)}" y1="13" '
            f'x2="{_x(est.high, left, width)}" y2="21"/>',
            f'<circle class="dot" cx="{_x(est.value, left, width)}" cy="17" r="3"/>',
        ]
    if g.threshold is not None:
        x = _x(g.threshold, left, width)
        parts.append(f'<line class="threshold" x1="{x}" y1="6" x2="{x}" y2="28"/>')
    parts.append("</svg>")
    return "".join(parts)


def _describe(g: Gauge) -> str:
    est = g.estimate
    text = est.format(3) if est.defined else f"n/a (n={est.n})"
    if g.threshold is not None:
        text += f", threshold {g.threshold:.2f}: {g.status}"
    return text


def forest_plot(rows: Sequence[tuple[str, Estimate]], *, label_width: int = 190) -> str:
    """Failure rates with their intervals, one row per probe (a forest plot): a dot at the
    rate, a line over the 95% interval; an undefined rate is written ``n/a``."""
    width, row_h, top = 360.0, 22, 26
    total_w = label_width + int(width) + 150
    height = top + row_h * len(rows) + 8
    left = float(label_width)
    parts = [
        f'<svg class="forest" viewBox="0 0 {total_w} {height}" width="{total_w}" '
        f'height="{height}" role="img" aria-label="Probe failure rates with 95% intervals">',
        "<title>Probe failure rates with 95% intervals</title>",
    ]
    for tick in _TICKS:
        x = _x(tick, left, width)
        parts.append(
            f'<line class="grid" x1="{x}" y1="{top - 6}" x2="{x}" y2="{height - 4}"/>'
            f'<text class="tick" x="{x}" y="{top - 10}" text-anchor="middle">{tick:.2f}</text>'
        )
    for i, (name, est) in enumerate(rows):
        y = top + row_h * i + row_h // 2
        parts.append(
            f'<text class="label" x="{label_width - 8}" y="{y + 4}" text-anchor="end">'
            f"{esc(name)}</text>"
        )
        if est.defined:
            parts.append(
                f'<line class="ci" x1="{_x(est.low, left, width)}" y1="{y}" '
                f'x2="{_x(est.high, left, width)}" y2="{y}"/>'
                f'<circle class="dot" cx="{_x(est.value, left, width)}" cy="{y}" r="4">'
                f"<title>{esc(name)}: {esc(est.format(3))}</title></circle>"
            )
        text = est.format(3) if est.defined else f"n/a (n={est.n})"
        parts.append(
            f'<text class="value" x="{left + width + 10:.2f}" y="{y + 4}">{esc(text)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def gauge_table(gauges: Sequence[Gauge]) -> str:
    """A sortable table: one row per gauge with its value, threshold and status."""
    rows = []
    for g in gauges:
        value = g.estimate.format(3) if g.estimate.defined else f"n/a (n={g.estimate.n})"
        threshold = "–" if g.threshold is None else f"≥ {g.threshold:.2f}"
        rows.append(
            f'<tr><th scope="row">{esc(g.label)}</th><td>{gauge(g)}</td>'
            f"<td>{esc(value)}</td><td>{esc(threshold)}</td>"
            f'<td><span class="badge {g.status}">{esc(g.status)}</span></td></tr>'
        )
    return (
        '<table class="sortable"><thead><tr><th>metric</th><th>gauge</th>'
        "<th>value [95% CI] (n)</th><th>threshold</th><th>status</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )

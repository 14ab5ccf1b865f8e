"""Each probe's own rates as plots in the HTML report (poisoning per style, retrieval gaps
per rewording kind, the chunking sweep, …), read generically from its summary.

Rules, over a probe's own summary fields (``ProbeRunSummary.own``):

- a field holding an Estimate whose interval lies in [0, 1] (a rate) is a row of the probe's
  "rates" plot; other estimates (mean ranks) are listed as text;
- a breakdown — a mapping of rows, or a list of rows, each row either an Estimate or a mapping
  holding one — becomes its own plot: one row per entry, the entry's first rate field
  (first-seen order), named in the plot's title; a list row is labelled by its first text or
  number field.
"""

from __future__ import annotations

from typing import Any

from probeguard.core.estimate import Estimate
from probeguard.probes.models import ProbeRunSummary
from probeguard.reports.html_escape import esc
from probeguard.reports.html_svg import forest_plot

__all__ = ["as_estimate", "probe_details"]


def as_estimate(value: Any) -> Estimate | None:
    """An Estimate, or its JSON (``null`` read as NaN), as an Estimate; None otherwise."""
    if isinstance(value, Estimate):
        return value
    if isinstance(value, dict) and {"value", "low", "high", "n"} <= set(value):
        return Estimate.model_validate(
            {k: (float("nan") if value[k] is None else value[k]) for k in value}
        )
    return None


def _is_rate(est: Estimate) -> bool:
    return est.defined and 0.0 <= est.low and est.high <= 1.0


def _first_rate(row: Any) -> tuple[str, Estimate] | None:
    est = as_estimate(row)
    if est is not None:
        return ("", est) if _is_rate(est) or not est.defined else None
    if isinstance(row, dict):
        for key, value in row.items():
            sub = as_estimate(value)
            if sub is not None and _is_rate(sub):
                return key, sub
    return None


def _label(row: dict[str, Any], index: int) -> str:
    for value in row.values():
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return str(value)
    return str(index + 1)


def _breakdown(key: str, value: Any) -> tuple[str, list[tuple[str, Estimate]]] | None:
    """``(title, rows)`` when ``value`` is a breakdown (module doc), else None."""
    if isinstance(value, dict) and value and as_estimate(value) is None:
        items = [(str(name), row) for name, row in value.items()]
    elif isinstance(value, list) and value and all(isinstance(r, dict) for r in value):
        items = [(_label(row, i), row) for i, row in enumerate(value)]
    else:
        return None
    rows, fields = [], []
    for name, row in items:
        found = _first_rate(row)
        if found is None:
            return None
        fields.append(found[0])
        rows.append((name, found[1]))
    field = fields[0] if fields and all(f == fields[0] for f in fields) else ""
    return (f"{key}: {field}" if field else key), rows


def _one_probe(name: str, summary: ProbeRunSummary) -> str:
    rates: list[tuple[str, Estimate]] = []
    others: list[str] = []
    plots: list[str] = []
    for key, value in summary.own.items():
        est = as_estimate(value)
        if est is not None:
            if _is_rate(est):
                rates.append((key, est))
            else:
                shown = est.format(3) if est.defined else f"n/a (n={est.n})"
                others.append(f"<li>{esc(key)}: {esc(shown)}</li>")
            continue
        found = _breakdown(key, value)
        if found is not None:
            title, rows = found
            plots.append(f"<h4>{esc(title)}</h4>{forest_plot(rows)}")
    if not (rates or others or plots):
        return ""
    head = f"<h4>rates</h4>{forest_plot(rates)}" if rates else ""
    listed = f"<ul>{''.join(others)}</ul>" if others else ""
    return f"<details><summary>{esc(name)}</summary>{head}{listed}{''.join(plots)}</details>"


def probe_details(probes: dict[str, Any]) -> str:
    """One collapsible block per probe with its own rates and breakdowns as forest plots."""
    blocks = [_one_probe(name, s) for name, s in probes.items() if isinstance(s, ProbeRunSummary)]
    body = "".join(b for b in blocks if b)
    return f'<div class="probe-details"><h3>Per probe</h3>{body}</div>' if body else ""

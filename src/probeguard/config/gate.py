"""The release gate's policy: ``gate:`` in a scan config, or a file of its own (``--gate FILE``,
read by ``config.loading.load_gate_policy``).

A *slice* names a set of paired units (``engine.compare_units``): ``probe:<name>`` (that
probe's groups), ``golden:pass``, ``golden:hit``, ``golden:contains`` (the golden questions'
checks), ``tag:<tag>`` (every golden question and probe group carrying the tag) and
``attack_type:<type>`` (the attack-type groups of one type). A limit's ``slice`` may be a
glob (``probe:*``).

Rules, each a check of its own (``engine.gate``):

- ``no_significant_regression``: every probe and golden slice whose exact McNemar test,
  Holm-adjusted within its kind, is below ``alpha`` with more new failures than fixes fails
  (needs a baseline);
- ``limits``: per slice, a ``max_rate`` on the candidate's failure rate (its point value, or the
  upper or lower end of its Wilson interval with ``bound``), a ``max_new_failures`` count
  (needs a baseline), and a stricter ``alpha`` for a critical slice's regression test;
- ``max_error_rate``: the share of the candidate's cases that errored; above it the run is
  incomplete (exit 3). A run whose every case errored is always incomplete.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from probeguard.core.config import StrictModel

__all__ = ["GatePolicy", "SliceLimit"]


class SliceLimit(StrictModel):
    """Limits on one slice (or every slice a glob matches)."""

    slice: str = Field(min_length=1)
    """``probe:<name>``, ``golden:pass|hit|contains``, ``tag:<tag>``, ``attack_type:<type>``;
    a glob (``probe:*``) applies the limit to each match."""
    max_rate: float | None = Field(default=None, ge=0.0, le=1.0)
    """The candidate's failure rate must not exceed this."""
    bound: Literal["value", "low", "high"] = "value"
    """Which end of the Wilson interval ``max_rate`` is checked against: ``high`` fails
    unless the rate is below the limit with 95% confidence; ``low`` only when it is above."""
    max_new_failures: int | None = Field(default=None, ge=0)
    """At most this many units that pass in the baseline may fail in the candidate."""
    alpha: float | None = Field(default=None, gt=0.0, lt=1.0)
    """A stricter level for this slice's regression test (a critical slice), whatever
    ``no_significant_regression`` says."""
    required: bool = False
    """Fail the check when no slice matches (a misspelt slice otherwise passes vacuously
    and is reported as unmatched)."""


class GatePolicy(StrictModel):
    """What a candidate must satisfy to be released."""

    alpha: float = Field(default=0.05, gt=0.0, lt=1.0)
    """Family-wise level of the regression tests (Holm within each kind of slice)."""
    power: float = Field(default=0.8, gt=0.0, lt=1.0)
    """Power at which the minimum detectable difference is reported."""
    no_significant_regression: bool = True
    """Fail on a significant regression of any probe or golden slice (needs a baseline)."""
    limits: list[SliceLimit] = Field(default_factory=list)
    max_error_rate: float | None = Field(default=None, ge=0.0, le=1.0)
    """Above this share of errored cases the candidate run is incomplete (exit 3)."""
    bootstrap_resamples: int = Field(default=2000, ge=100)
    """Resamples of the paired bootstrap interval of each rate difference."""

"""The Failure Coverage Score (FCS): the share of the adversarial failure boundary that
standard evaluation misses.

For probes p with failure rates r_p and overlap weights w_p (the share of p's failures that a
standard, well-formed-question evaluation would also catch):

    unique_rate_p           = r_p × (1 − w_p)
    adversarial_unique_rate = 1 − Π_p (1 − unique_rate_p)
    adversarial_union_rate  = 1 − Π_p (1 − r_p)
    FCS                     = adversarial_unique_rate / adversarial_union_rate

Each probe declares its weight (``Probe.overlap_weight``) and a config can override it
(``probes.overlap_weights``); the caller passes them in. The products treat probes as
independent failure sources. FCS is NaN when the union rate is 0 (no adversarial failure
found: nothing to cover), and it is never forced to 0 or 1. The union rate is also reported
as the overall adversarial failure rate.

``FCSSummary`` is the score as a run keeps it (``run.json``'s ``summary.fcs``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from probeguard.core.artifacts import FROZEN_RESULT, ByKeyModel, JsonFloat

__all__ = ["FCSResult", "FCSSummary", "failure_coverage_score"]


@dataclass(frozen=True)
class FCSResult:
    fcs: float
    adversarial_unique_rate: float
    adversarial_union_rate: float
    unique_rates: dict[str, float]

    def interpretation(self) -> str:
        """One line on what the score means for this pipeline."""
        if math.isnan(self.fcs):
            return (
                "No adversarial failure was found, so there is no failure boundary to "
                "cover: FCS is undefined."
            )
        share = f"{self.fcs:.0%}"
        if self.fcs >= 0.7:
            level = "Most"
        elif self.fcs >= 0.4:
            level = "A large part"
        else:
            level = "A small part"
        return (
            f"{level} ({share}) of the adversarial failure boundary "
            f"(overall adversarial failure rate {self.adversarial_union_rate:.1%}) is "
            "invisible to standard evaluation of well-formed questions."
        )

    def recommendation(self, probe_rates: Mapping[str, float]) -> str:
        """Which probe to act on first: the largest contributor of unique failures."""
        if math.isnan(self.fcs) or not self.unique_rates:
            return "Keep these probes in CI to catch regressions."
        worst = max(sorted(self.unique_rates), key=lambda p: self.unique_rates[p])
        return (
            f"Start with {worst.replace('_', ' ')} (failure rate {probe_rates[worst]:.1%}, "
            f"{self.unique_rates[worst]:.1%} unseen by standard evaluation), and gate "
            "releases on these probes, not on the standard score alone."
        )


class FCSSummary(ByKeyModel):
    """The Failure Coverage Score of a scan and its reading (``run.json``'s
    ``summary.fcs``, built by ``probes.evaluate.judge_probes``)."""

    model_config = FROZEN_RESULT

    value: JsonFloat
    """FCS; NaN (written ``null``) when no adversarial failure was found."""
    adversarial_failure_rate: float
    """The union rate: the chance a case fails under some probe (``adversarial_union_rate``)."""
    adversarial_unique_rate: float
    """The part of it standard evaluation would miss."""
    overlap_weights: dict[str, float]
    """The weight FCS gave each probe with a defined failure rate, by probe name."""
    interpretation: str
    """``FCSResult.interpretation``."""
    recommendation: str
    """``FCSResult.recommendation``: which probe to act on first."""


def failure_coverage_score(
    probe_rates: Mapping[str, float], overlap_weights: Mapping[str, float] | None = None
) -> FCSResult:
    """FCS from per-probe failure rates (formula in the module doc). Probes with an undefined
    (NaN) rate are left out; a probe without a weight in ``overlap_weights`` weighs 0."""
    weights = dict(overlap_weights or {})
    rates = {p: float(r) for p, r in sorted(probe_rates.items()) if not math.isnan(float(r))}
    for p, r in rates.items():
        if not 0.0 <= r <= 1.0:
            raise ValueError(f"probe rate for {p} must be in [0, 1], got {r}")
        if not 0.0 <= weights.get(p, 0.0) <= 1.0:
            raise ValueError(f"overlap weight for {p} must be in [0, 1], got {weights[p]}")
    unique = {p: r * (1.0 - weights.get(p, 0.0)) for p, r in rates.items()}
    unique_rate = 1.0 - math.prod(1.0 - u for u in unique.values())
    union_rate = 1.0 - math.prod(1.0 - r for r in rates.values())
    fcs = unique_rate / union_rate if union_rate > 0 else float("nan")
    return FCSResult(
        fcs=fcs,
        adversarial_unique_rate=unique_rate,
        adversarial_union_rate=union_rate,
        unique_rates=unique,
    )

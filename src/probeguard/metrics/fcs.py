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

The seed formula saturates: one probe that fails on almost every question pushes the union
rate, and with it FCS, towards 1 whatever the others do. The **empirical FCS** counts
questions instead of multiplying rates. Per golden question q (``QuestionOutcome``):
``standard_failed`` (its golden verdict failed) and ``adversarial_failed`` (some probe group
about q failed). Then

    empirical FCS = |{q : adversarial_failed ∧ ¬standard_failed}|
                    / |{q : adversarial_failed ∨ standard_failed}|

the share of the questions that fail anything which standard evaluation alone would have
passed; NaN when no question fails anything. It is the mean of the indicator
``adversarial_failed ∧ ¬standard_failed`` over the failing questions, so its 95% interval is
the percentile bootstrap of that mean over those questions (``stats.bootstrap_mean``; Efron &
Tibshirani 1993, ch. 13), seeded by the run's seed, ``EMPIRICAL_RESAMPLES`` resamples.

``FCSSummary`` is the score as a run keeps it (``run.json``'s ``summary.fcs``), with the
empirical figure in ``FCSSummary.empirical`` (``EmpiricalFCS``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import SerializationInfo, model_serializer

from probeguard.core.artifacts import FROZEN_RESULT, ByKeyModel, JsonEstimate, JsonFloat
from probeguard.stats import bootstrap_mean

__all__ = [
    "EMPIRICAL_RESAMPLES",
    "EmpiricalFCS",
    "FCSResult",
    "FCSSummary",
    "QuestionOutcome",
    "empirical_fcs",
    "failure_coverage_score",
]

EMPIRICAL_RESAMPLES = 2000
"""Bootstrap resamples of the empirical FCS interval (``stats.bootstrap_mean``'s default)."""


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


@dataclass(frozen=True)
class QuestionOutcome:
    """One golden question as the empirical FCS sees it."""

    standard_failed: bool
    """Its golden verdict failed (standard evaluation caught it)."""
    adversarial_failed: bool
    """Some probe group about this question failed."""


class EmpiricalFCS(ByKeyModel):
    """The empirical FCS (module doc) and the counts it is made of (``summary.fcs.empirical``)."""

    model_config = FROZEN_RESULT

    value: JsonEstimate
    """Share of the failing questions that only a probe caught; percentile-bootstrap 95%
    interval over those questions; NaN (``null``) when no question fails anything."""
    questions: int
    """Golden questions with a verdict (an errored one is in ``unscored_questions``)."""
    adversarial_only: int
    """Questions failing some probe while passing standard evaluation (the numerator)."""
    standard_only: int
    """Questions failing standard evaluation and no probe."""
    both: int
    """Questions failing standard evaluation and some probe."""
    unscored_questions: int = 0
    """Golden questions without a verdict (errored): left out."""
    failed_groups_without_question: int = 0
    """Failed probe groups about no golden question (attack cases, invented questions,
    documents): real failures, outside the per-question count."""
    interpretation: str = ""
    """One sentence on what the figure says (``empirical_interpretation``)."""


def empirical_fcs(
    outcomes: Sequence[QuestionOutcome],
    *,
    seed: int,
    unscored_questions: int = 0,
    failed_groups_without_question: int = 0,
    resamples: int = EMPIRICAL_RESAMPLES,
) -> EmpiricalFCS:
    """The empirical FCS over ``outcomes`` (formula in the module doc), with its seeded
    bootstrap interval; the two counts kept apart are recorded as given."""
    failing = [o for o in outcomes if o.standard_failed or o.adversarial_failed]
    only = [o.adversarial_failed and not o.standard_failed for o in failing]
    estimate = bootstrap_mean([float(f) for f in only], seed=seed, resamples=resamples)
    both = sum(1 for o in failing if o.standard_failed and o.adversarial_failed)
    result = EmpiricalFCS(
        value=estimate,
        questions=len(outcomes),
        adversarial_only=sum(only),
        standard_only=len(failing) - sum(only) - both,
        both=both,
        unscored_questions=unscored_questions,
        failed_groups_without_question=failed_groups_without_question,
    )
    return result.model_copy(update={"interpretation": empirical_interpretation(result)})


def empirical_interpretation(result: EmpiricalFCS) -> str:
    """One sentence: how many of the failing questions only a probe caught."""
    failing = result.adversarial_only + result.standard_only + result.both
    if failing == 0:
        return (
            f"None of the {result.questions} golden questions failed standard evaluation or "
            "a probe: the empirical FCS is undefined."
        )
    return (
        f"{result.adversarial_only} of the {failing} golden questions that fail anything "
        f"fail only under a probe: standard evaluation passes them ({result.both} fail both, "
        f"{result.standard_only} only standard evaluation)."
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
    empirical: EmpiricalFCS | None = None
    """The empirical FCS over golden questions (``empirical_fcs``); None (and left out of the
    JSON) in run logs written before it existed."""

    @model_serializer(mode="wrap")
    def _leave_out_absent_empirical(self, handler: Any, info: SerializationInfo) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("empirical", ...) is None:
            del data["empirical"]
        return data


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

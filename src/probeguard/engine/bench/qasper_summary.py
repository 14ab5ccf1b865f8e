"""The per-condition rows of ``probeguard bench qasper``: pure functions of the per-question
records (measures defined in ``engine.bench.qasper``).

Per (generator, experiment, condition), over the records that fall in the condition:
``refusals`` is the Wilson share of refused answers among the calls that did not fail;
``token_f1``, ``faithfulness`` and ``ecs`` are means with a seeded percentile bootstrap 95%
interval (``stats.bootstrap_mean``; NaN values are unscored and left out of n); the
silent-failure quadrant is ``metrics.coverage.silent_failure_quadrant`` at
faithfulness > 0.5 ∧ ECS < 0.5 (Wilson shares).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from probeguard.engine.bench.qasper_conditions import BOUNDARY, DISTRACTION, SPREAD
from probeguard.metrics.coverage import silent_failure_quadrant
from probeguard.stats import bootstrap_mean, proportion

__all__ = ["CONDITION_ORDER", "condition_row", "condition_rows"]

CONDITION_ORDER: dict[str, tuple[str, ...]] = {
    "boundary": BOUNDARY,
    "distraction": DISTRACTION,
    "spread": SPREAD,
    "chunk_size": (),
}
"""Experiment → its conditions in table order (chunk sizes: ascending, from the records)."""


def condition_row(
    records: Sequence[dict[str, Any]],
    *,
    generator: str,
    experiment: str,
    condition: str,
    seed: int,
    resamples: int,
) -> dict[str, Any]:
    """The measures of one condition over its records (module doc)."""

    def mean(key: str) -> dict[str, Any]:
        values = [float(r[key]) for r in records]
        return bootstrap_mean(values, seed=seed, resamples=resamples).model_dump()

    quadrant = silent_failure_quadrant(
        [float(r["faithfulness"]) for r in records], [float(r["ecs"]) for r in records]
    )
    return {
        "generator": generator,
        "experiment": experiment,
        "condition": condition,
        "questions": len(records),
        "errors": sum(1 for r in records if r.get("error")),
        "refusals": proportion(
            [bool(r["refused"]) for r in records if not r.get("error")]
        ).model_dump(),
        "token_f1": mean("token_f1"),
        "faithfulness": mean("faithfulness"),
        "ecs": mean("ecs"),
        "silent_share": quadrant.share_of_all.model_dump(),
        "silent_share_of_low_ecs": quadrant.share_of_low_coverage.model_dump(),
        "silent": quadrant.silent,
        "low_ecs": quadrant.low_coverage,
        "scored": quadrant.scored,
    }


def _conditions(experiment: str, records: Sequence[dict[str, Any]]) -> list[str]:
    seen = {r["conditions"][experiment] for r in records if experiment in r["conditions"]}
    order = CONDITION_ORDER[experiment]
    if order:
        return [c for c in order if c in seen]
    return sorted(seen, key=lambda c: (len(c), c))


def condition_rows(
    records: Sequence[dict[str, Any]], *, seed: int, resamples: int
) -> list[dict[str, Any]]:
    """One row per (generator, experiment, condition) with records: generators in record
    order, experiments in ``CONDITION_ORDER`` order, conditions in each one's order."""
    rows = []
    for generator in dict.fromkeys(r["generator"] for r in records):
        mine = [r for r in records if r["generator"] == generator]
        for experiment in CONDITION_ORDER:
            for condition in _conditions(experiment, mine):
                group = [r for r in mine if r["conditions"].get(experiment) == condition]
                rows.append(
                    condition_row(
                        group,
                        generator=generator,
                        experiment=experiment,
                        condition=condition,
                        seed=seed,
                        resamples=resamples,
                    )
                )
    return rows

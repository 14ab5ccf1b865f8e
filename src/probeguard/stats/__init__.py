"""Statistics: estimates with intervals, and paired tests for baseline-vs-candidate runs."""

from probeguard.core.estimate import Estimate
from probeguard.stats.estimate import bootstrap_mean, proportion, wilson
from probeguard.stats.paired import (
    holm,
    mcnemar_exact,
    min_significant_discordant,
    minimum_detectable_difference,
    paired_bootstrap_difference,
)

__all__ = [
    "Estimate",
    "bootstrap_mean",
    "holm",
    "mcnemar_exact",
    "min_significant_discordant",
    "minimum_detectable_difference",
    "paired_bootstrap_difference",
    "proportion",
    "wilson",
]

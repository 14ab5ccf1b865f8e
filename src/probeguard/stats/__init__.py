"""Statistics: estimates with intervals; binary classification against labels; paired tests
for baseline-vs-candidate runs."""

from probeguard.core.estimate import Estimate
from probeguard.stats.classification import (
    ClassRates,
    Confusion,
    balanced_accuracy,
    best_threshold,
    class_rates,
    one_se_plateau,
    stable_threshold,
)
from probeguard.stats.estimate import bootstrap_mean, proportion, wilson
from probeguard.stats.paired import (
    cluster_members,
    holm,
    mcnemar_exact,
    min_significant_discordant,
    minimum_detectable_difference,
    paired_bootstrap_difference,
    paired_cluster_difference,
)

__all__ = [
    "ClassRates",
    "Confusion",
    "Estimate",
    "balanced_accuracy",
    "best_threshold",
    "bootstrap_mean",
    "class_rates",
    "cluster_members",
    "holm",
    "mcnemar_exact",
    "min_significant_discordant",
    "minimum_detectable_difference",
    "one_se_plateau",
    "paired_bootstrap_difference",
    "paired_cluster_difference",
    "proportion",
    "stable_threshold",
    "wilson",
]

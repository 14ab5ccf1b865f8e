"""Statistics: estimates with intervals; binary classification against labels."""

from probeguard.core.estimate import Estimate
from probeguard.stats.classification import (
    ClassRates,
    Confusion,
    balanced_accuracy,
    best_threshold,
    class_rates,
)
from probeguard.stats.estimate import bootstrap_mean, proportion, wilson

__all__ = [
    "ClassRates",
    "Confusion",
    "Estimate",
    "balanced_accuracy",
    "best_threshold",
    "bootstrap_mean",
    "class_rates",
    "proportion",
    "wilson",
]

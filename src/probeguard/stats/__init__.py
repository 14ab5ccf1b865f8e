"""Statistics: estimates with intervals."""

from probeguard.core.estimate import Estimate
from probeguard.stats.estimate import bootstrap_mean, proportion, wilson

__all__ = ["Estimate", "bootstrap_mean", "proportion", "wilson"]

"""Statistics: estimates with intervals."""

from probeguard.stats.estimate import Estimate, bootstrap_mean, proportion, wilson

__all__ = ["Estimate", "bootstrap_mean", "proportion", "wilson"]

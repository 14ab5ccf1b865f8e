"""Estimates with 95% intervals. Every rate ProbeGuard reports is an ``Estimate``.

Wilson score interval (Wilson 1927; Brown, Cai & DasGupta 2001, "Interval Estimation for a
Binomial Proportion"): with p̂ = k/n and z = 1.959964,

    centre = (p̂ + z²/2n) / (1 + z²/n)
    half   = z·sqrt(p̂(1−p̂)/n + z²/4n²) / (1 + z²/n)

It stays inside [0, 1] and behaves at k = 0 and k = n, unlike the Wald interval. With n = 0
there is nothing to estimate: value, low and high are NaN (undefined is not zero).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from probeguard.core.estimate import Estimate

Z_95 = 1.959963984540054


def wilson(successes: int, n: int, z: float = Z_95) -> Estimate:
    """Wilson score interval for ``successes`` out of ``n`` (formula in the module doc)."""
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got {successes}/{n}")
    if n == 0:
        nan = float("nan")
        return Estimate(value=nan, low=nan, high=nan, n=0, method="wilson")
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # Exact bounds at the extremes (k = 0 → low 0, k = n → high 1), and never let rounding
    # put the point estimate outside its own interval.
    low = 0.0 if successes == 0 else min(p, max(0.0, centre - half))
    high = 1.0 if successes == n else max(p, min(1.0, centre + half))
    return Estimate(value=p, low=low, high=high, n=n, method="wilson")


def proportion(flags: Sequence[bool]) -> Estimate:
    """Wilson estimate of the share of True in ``flags``."""
    return wilson(int(sum(bool(f) for f in flags)), len(flags))


def bootstrap_mean(
    values: Sequence[float], *, seed: int, resamples: int = 2000, z: float = Z_95
) -> Estimate:
    """Mean with a percentile bootstrap 95% interval (Efron & Tibshirani 1993, ch. 13).

    NaN values are unscored and left out of n. Randomness comes only from
    ``numpy.random.default_rng(seed)``, so the interval is reproducible.
    """
    arr = np.asarray([v for v in values if not math.isnan(v)], dtype=float)
    n = int(arr.size)
    if n == 0:
        nan = float("nan")
        return Estimate(value=nan, low=nan, high=nan, n=0, method="bootstrap")
    mean = float(arr.mean())
    if n == 1:
        return Estimate(value=mean, low=mean, high=mean, n=1, method="bootstrap")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(resamples, n))
    means = arr[idx].mean(axis=1)
    alpha = 2 * (1 - _normal_cdf(z))
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return Estimate(value=mean, low=float(low), high=float(high), n=n, method="bootstrap")


def _normal_cdf(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))

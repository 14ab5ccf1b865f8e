"""Paired tests for a baseline and a candidate judged on the same cases.

Each paired unit (a golden case, a probe group) failed or passed under both. With
``b`` = units that pass in the baseline and fail in the candidate (new failures) and ``c`` =
units that fail in the baseline and pass in the candidate (fixed), the concordant units carry
no information about a change; only the discordant ones do.

**Exact McNemar test** (McNemar 1947; the exact conditional form, Fay 2010, "Two-sided exact
tests and matching confidence intervals for discordant pairs"): under H0 (no change), given
``d = b + c`` discordant pairs, ``b ~ Binomial(d, 1/2)``, and the two-sided p-value is

    p = min(1, 2 · P(X ≤ min(b, c))),   X ~ Binomial(d, 1/2)     (p = 1 when d = 0)

which is ``scipy.stats.binomtest(b, d, 0.5).pvalue`` (the distribution is symmetric).

**Holm's step-down correction** (Holm 1979, "A simple sequentially rejective multiple test
procedure"): with the m p-values sorted ascending ``p(1) ≤ … ≤ p(m)``,

    adjusted p(i) = min(1, max over j ≤ i of (m − j + 1) · p(j))

and a hypothesis is rejected at family-wise level α when its adjusted p-value is below α.
NaN p-values (nothing paired) stay NaN and do not count in m.

**Paired bootstrap of the rate difference** (Efron & Tibshirani 1993, ch. 13, resampling the
pairs, not each arm apart): Δ = mean(candidate) − mean(baseline) over the paired failure
flags; each resample draws n pair indices with replacement from ``default_rng(seed)``, and
the interval is the 2.5th and 97.5th percentiles of the resampled Δ.

**Minimum detectable difference** of the exact McNemar test for n pairs at level α with
power 1 − β, in the most favourable case for detecting it: every discordant pair goes one way
(a regression with no fixes to offset it), so ``b ~ Binomial(n, δ)`` and ``c = 0``. The test
then rejects exactly when ``b ≥ d*``, the least d with ``2 · 2^(−d) < α`` (the smallest
significant number of one-way discordant pairs), and

    MDD = min { δ : P(Binomial(n, δ) ≥ d*) ≥ 1 − β }

found by bisection. It is a lower bound: when fixes offset some failures the test needs a
larger δ. A "no significant regression" on n = 12 pairs (MDD ≈ 0.58 at α = 0.05, power 0.8)
rules out only regressions larger than that — it is not evidence of safety.

**Paired cluster bootstrap of a statistic's difference** (two scorers of the same records,
e.g. a judge and a baseline; clusters resampled as in Davison & Hinkley 1997, §3.8, pairs
kept as in Efron & Tibshirani 1993, ch. 13): with ``A(I)`` and ``B(I)`` the two statistics
over a multiset of record indices ``I``,

    Δ = A(all) − B(all),   Δ*_r = A(I_r) − B(I_r)   for r = 1 … R

where ``I_r`` is the union of ``k`` clusters drawn with replacement from the ``k`` clusters:
one draw serves both statistics, so what the records share cancels. The interval is the
2.5th and 97.5th percentiles of the finite Δ*_r (a draw where either is NaN is dropped).
"Candidate beats baseline by a margin the interval shows" = the interval's low end > 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from probeguard.core.estimate import Estimate

__all__ = [
    "binomial_cdf",
    "cluster_members",
    "holm",
    "mcnemar_exact",
    "min_significant_discordant",
    "minimum_detectable_difference",
    "paired_bootstrap_difference",
    "paired_cluster_difference",
]

PAIRED_CLUSTER_METHOD = "paired cluster bootstrap"
Statistic = Callable[[np.ndarray], float]
"""A statistic over an array of record indices (repeats allowed)."""


def binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X ≤ k) for X ~ Binomial(n, p), summed exactly in log space (``math.lgamma``)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    log_p, log_q = math.log(p), math.log1p(-p)
    terms = [
        math.lgamma(n + 1)
        - math.lgamma(i + 1)
        - math.lgamma(n - i + 1)
        + i * log_p
        + (n - i) * log_q
        for i in range(k + 1)
    ]
    top = max(terms)
    return min(1.0, math.exp(top) * sum(math.exp(t - top) for t in terms))


def mcnemar_exact(new_failures: int, fixed: int) -> float:
    """Two-sided exact McNemar p-value for ``b = new_failures`` and ``c = fixed`` discordant
    pairs (formula in the module doc); 1.0 when there is no discordant pair."""
    if new_failures < 0 or fixed < 0:
        raise ValueError(f"discordant counts must be >= 0, got {new_failures}, {fixed}")
    d = new_failures + fixed
    if d == 0:
        return 1.0
    return min(1.0, 2.0 * binomial_cdf(min(new_failures, fixed), d, 0.5))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values in the input order (formula in the module doc); NaN stays NaN
    and is not counted in the family size."""
    scored = sorted((p, i) for i, p in enumerate(p_values) if not math.isnan(p))
    m = len(scored)
    adjusted = [math.nan] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(scored):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted


def paired_bootstrap_difference(
    baseline: Sequence[bool],
    candidate: Sequence[bool],
    *,
    seed: int,
    resamples: int = 2000,
) -> Estimate:
    """Δ = candidate rate − baseline rate over paired flags, with a percentile bootstrap 95%
    interval over resampled pairs (module doc). NaN with n = 0; a point interval with n = 1."""
    if len(baseline) != len(candidate):
        raise ValueError(f"paired flags differ in length: {len(baseline)} vs {len(candidate)}")
    n = len(baseline)
    if n == 0:
        nan = math.nan
        return Estimate(value=nan, low=nan, high=nan, n=0, method="paired_bootstrap")
    diff = np.asarray(candidate, dtype=float) - np.asarray(baseline, dtype=float)
    value = float(diff.mean())
    if n == 1 or not diff.any():
        return Estimate(value=value, low=value, high=value, n=n, method="paired_bootstrap")
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, n, size=(resamples, n))].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return Estimate(value=value, low=float(low), high=float(high), n=n, method="paired_bootstrap")


def min_significant_discordant(alpha: float) -> int:
    """d*: the fewest discordant pairs, all one way, that the two-sided exact McNemar test
    finds significant at ``alpha`` (2 · 2^(−d) < α); e.g. 6 at α = 0.05."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    d = 1
    while 2.0 * 0.5**d >= alpha:
        d += 1
    return d


def minimum_detectable_difference(n: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest rate difference δ that n pairs detect with probability ``power`` at
    ``alpha``, in the most favourable case (module doc); NaN when n = 0, 1.0 (nothing
    smaller than everything) when even δ = 1 cannot reach d* pairs."""
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be in (0, 1), got {power}")
    if n <= 0:
        return math.nan
    need = min_significant_discordant(alpha)
    if need > n:
        return 1.0

    def detects(delta: float) -> bool:
        return 1.0 - binomial_cdf(need - 1, n, delta) >= power

    low, high = 0.0, 1.0
    for _ in range(60):
        mid = (low + high) / 2
        if detects(mid):
            high = mid
        else:
            low = mid
    return high


def cluster_members(clusters: Sequence[str]) -> list[np.ndarray]:
    """The record indices of each distinct cluster label, clusters in sorted label order."""
    if not clusters:
        return []
    _, inverse = np.unique(np.asarray(clusters), return_inverse=True)
    return [np.flatnonzero(inverse == k) for k in range(int(inverse.max()) + 1)]


def paired_cluster_difference(
    candidate: Statistic,
    baseline: Statistic,
    clusters: Sequence[str],
    *,
    rng: np.random.Generator,
    resamples: int = 2000,
) -> Estimate:
    """Δ = candidate − baseline over the same records with a 95% paired cluster-bootstrap
    interval (module doc); n = records. NaN when either statistic is NaN on all records,
    a NaN interval when every draw is."""
    n = len(clusters)
    nan = math.nan
    every = np.arange(n)
    value = candidate(every) - baseline(every) if n else nan
    if math.isnan(value):
        return Estimate(value=nan, low=nan, high=nan, n=n, method=PAIRED_CLUSTER_METHOD)
    members = cluster_members(clusters)
    k = len(members)
    draws = []
    for _ in range(resamples):
        idx = np.concatenate([members[i] for i in rng.integers(0, k, size=k)])
        draws.append(candidate(idx) - baseline(idx))
    finite = np.asarray([d for d in draws if not math.isnan(d)])
    if finite.size == 0:
        return Estimate(value=value, low=nan, high=nan, n=n, method=PAIRED_CLUSTER_METHOD)
    low, high = np.quantile(finite, [0.025, 0.975])
    return Estimate(
        value=value, low=float(low), high=float(high), n=n, method=PAIRED_CLUSTER_METHOD
    )

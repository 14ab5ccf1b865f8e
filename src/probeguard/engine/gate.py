"""The release gate: a ``GatePolicy`` (``config.gate``) applied to a candidate run, alone or
paired with a baseline (``engine.compare``), as a list of checks and an exit code.

Checks, each one JUnit test case and one pytest item:

- ``max_error_rate``: the candidate is *incomplete* when it has no case, when every case
  errored, or when its error rate exceeds ``max_error_rate`` — its verdicts cannot be trusted,
  so the gate says so (exit 3) instead of passing or failing; ``max_error_rate:baseline``: the
  same for the baseline, whose units a comparison pairs;
- ``regression:<slice>``: with a baseline, fails when the slice's Holm-adjusted exact McNemar
  p-value is below its alpha and it has more new failures than fixes (b > c). Tested for every
  probe and golden slice when ``no_significant_regression``, and for any slice a limit gives
  an ``alpha`` (the stricter alpha wins);
- ``max_rate:<slice>``: the candidate's failure rate (or an end of its Wilson interval) above
  the limit fails; an undefined rate (no scored unit) passes and says so;
- ``max_new_failures:<slice>``: with a baseline, more new failures than allowed fails;
- ``unmatched:<pattern>``: a limit whose slice matches nothing (fails when ``required``).

Exit codes: 0 pass, 1 a check failed, 3 incomplete (bad input, exit 2, is the CLI's).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase

from probeguard.config.gate import GatePolicy, SliceLimit
from probeguard.engine.compare_units import run_units, slice_rates
from probeguard.results.compare import GateCheck, GateOutcome, RunRef, SliceComparison, SliceRate
from probeguard.results.run import RunLog

__all__ = ["completeness_check", "evaluate_gate", "exit_code_for", "gate_run", "run_ref"]

REGRESSION_KINDS = ("probe", "golden")
"""The kinds of slice ``no_significant_regression`` tests (tags and attack types only when a
limit gives them an ``alpha``)."""


def evaluate_gate(
    policy: GatePolicy,
    rates: Mapping[str, SliceRate],
    candidate: RunRef,
    slices: Sequence[SliceComparison] | None = None,
    baseline: RunRef | None = None,
) -> GateOutcome:
    """The checks of ``policy`` on the candidate's slice ``rates`` (and, with a ``baseline``,
    the paired ``slices``), and the verdict (module doc)."""
    runs = [("", candidate)] + ([(":baseline", baseline)] if baseline is not None else [])
    completeness = [
        completeness_check(run.cases, run.errors, policy.max_error_rate, suffix=suffix)
        for suffix, run in runs
    ]
    by_name = {s.slice: s for s in slices or ()}
    checks: dict[str, GateCheck] = {c.id: c for c in completeness}
    if slices is not None:
        for check in _regression_checks(policy, by_name):
            checks.setdefault(check.id, check)
    for limit in policy.limits:
        for check in _limit_checks(limit, rates, by_name if slices is not None else None):
            checks.setdefault(check.id, check)
    ordered = list(checks.values())
    status = (
        "incomplete"
        if not all(c.passed for c in completeness)
        else "fail"
        if any(not c.passed for c in ordered)
        else "pass"
    )
    return GateOutcome(
        status=status, exit_code=exit_code_for(status), checks=ordered, policy=policy
    )


def gate_run(run: RunLog, policy: GatePolicy, path: str = "candidate") -> GateOutcome:
    """The gate on one run without a baseline: completeness and the rate limits (the
    regression and new-failure checks need a baseline and are left out)."""
    return evaluate_gate(policy, slice_rates(run_units(run)), run_ref(run, path))


def run_ref(run: RunLog, path: str) -> RunRef:
    """A run's identity and error count, as a comparison records it."""
    cases, errors = run.stats.cases, run.stats.errors
    return RunRef(
        path=path,
        pipeline_name=run.pipeline_name,
        pipeline_fingerprint=run.pipeline_fingerprint,
        corpus_fingerprint=run.corpus_fingerprint,
        seed=run.seed,
        cases=cases,
        errors=errors,
        error_rate=errors / cases if cases else math.nan,
    )


def exit_code_for(status: str) -> int:
    """0 pass, 1 fail, 3 incomplete."""
    return {"pass": 0, "fail": 1, "incomplete": 3}[status]


def completeness_check(
    cases: int, errors: int, max_error_rate: float | None, *, suffix: str = ""
) -> GateCheck:
    """Incomplete when there is no case, every case errored, or the error rate exceeds
    ``max_error_rate`` (None: only the first two). ``suffix`` names the run in the check's
    id (``max_error_rate:baseline``)."""
    rate = errors / cases if cases else math.nan
    if cases == 0:
        passed, why = False, "the run has no case"
    elif errors == cases:
        passed, why = False, f"every case errored ({errors}/{cases})"
    elif max_error_rate is not None and rate > max_error_rate:
        passed, why = False, f"error rate {rate:.3f} ({errors}/{cases}) > {max_error_rate:g}"
    else:
        limit = "" if max_error_rate is None else f" <= {max_error_rate:g}"
        passed, why = True, f"error rate {rate:.3f} ({errors}/{cases}){limit}"
    who = f"{suffix[1:]} run: " if suffix else ""
    return GateCheck(
        id=f"max_error_rate{suffix}", rule="max_error_rate", passed=passed, message=who + why
    )


def _regression_alphas(
    policy: GatePolicy, slices: Mapping[str, SliceComparison]
) -> dict[str, float]:
    alphas: dict[str, float] = {}
    if policy.no_significant_regression:
        alphas = {n: policy.alpha for n, s in slices.items() if s.kind in REGRESSION_KINDS}
    for limit in policy.limits:
        if limit.alpha is None:
            continue
        for name in _matches(limit.slice, slices):
            alphas[name] = min(alphas.get(name, 1.0), limit.alpha)
    return alphas


def _regression_checks(
    policy: GatePolicy, slices: Mapping[str, SliceComparison]
) -> list[GateCheck]:
    alphas = _regression_alphas(policy, slices)
    return [regression_check(slices[name], alphas[name]) for name in sorted(alphas)]


def regression_check(s: SliceComparison, alpha: float) -> GateCheck:
    """``regression:<slice>``: fails on a significant (Holm-adjusted p < alpha) change with
    more new failures than fixes."""
    c = s.counts
    regressed = not math.isnan(s.p_adjusted) and s.p_adjusted < alpha and c.new_failures > c.fixed
    message = (
        f"{s.slice}: failure rate {_rate(s.baseline_rate.value)} -> "
        f"{_rate(s.candidate_rate.value)} on {c.paired} paired units "
        f"(difference {_diff(s)}); {c.new_failures} new failures, {c.fixed} fixed; "
        f"McNemar p = {_p(s.p_value)}, Holm-adjusted p = {_p(s.p_adjusted)} "
        f"{'<' if regressed else 'vs'} alpha {alpha:g}; smallest detectable difference "
        f"{_rate(s.mdd)}"
    )
    return GateCheck(
        id=f"regression:{s.slice}",
        rule="regression",
        slice=s.slice,
        passed=not regressed,
        message=message,
        units=list(s.new_failures) if regressed else [],
    )


def _limit_checks(
    limit: SliceLimit,
    rates: Mapping[str, SliceRate],
    slices: Mapping[str, SliceComparison] | None,
) -> list[GateCheck]:
    names = _matches(limit.slice, {**rates, **(slices or {})})
    if not names:
        return [
            GateCheck(
                id=f"unmatched:{limit.slice}",
                rule="unmatched",
                slice=limit.slice,
                passed=not limit.required,
                message=f"no slice matches {limit.slice!r}",
            )
        ]
    checks = []
    for name in names:
        if limit.max_rate is not None and name in rates:
            checks.append(_max_rate_check(name, rates[name], limit))
        if limit.max_new_failures is not None and slices is not None and name in slices:
            checks.append(_new_failures_check(slices[name], limit.max_new_failures))
        if limit.alpha is not None and slices is not None and name in slices:
            checks.append(regression_check(slices[name], limit.alpha))
    return checks


def _max_rate_check(name: str, rate: SliceRate, limit: SliceLimit) -> GateCheck:
    est = rate.rate
    value = getattr(est, limit.bound)
    assert limit.max_rate is not None
    over = est.defined and value > limit.max_rate
    shown = "value" if limit.bound == "value" else f"{limit.bound} end of its 95% interval"
    message = (
        f"{name}: no scored unit (n/a)"
        if not est.defined
        else f"{name}: failure rate {est.format(3)}; {shown} {value:.3f} "
        f"{'>' if over else '<='} {limit.max_rate:g}"
    )
    return GateCheck(
        id=f"max_rate:{name}",
        rule="max_rate",
        slice=name,
        passed=not over,
        message=message,
        units=list(rate.failing) if over else [],
    )


def _new_failures_check(s: SliceComparison, allowed: int) -> GateCheck:
    over = s.counts.new_failures > allowed
    return GateCheck(
        id=f"max_new_failures:{s.slice}",
        rule="max_new_failures",
        slice=s.slice,
        passed=not over,
        message=f"{s.slice}: {s.counts.new_failures} new failures "
        f"{'>' if over else '<='} {allowed} allowed ({s.counts.fixed} fixed)",
        units=list(s.new_failures) if over else [],
    )


def _matches(pattern: str, names: Mapping[str, object]) -> list[str]:
    return sorted(n for n in names if fnmatchcase(n, pattern))


def _rate(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3f}"


def _p(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3g}"


def _diff(s: SliceComparison) -> str:
    d = s.difference
    if not d.defined:
        return "n/a"
    return f"{d.value:+.3f} [{d.low:+.3f}, {d.high:+.3f}]"

"""The attribution totals of a scan as a run keeps them (``run.json``'s
``summary.attribution``, made by ``engine.summarize_attribution``): how many failures were
found and attributed, counts per cause (overall and per probe), the swaps that could not run,
counts per mechanism and per contributing cause, and the most frequent fixes. Read like the
dicts they replace (``core.artifacts.ByKeyModel``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ConfigDict, Field

from probeguard.attribution.config import AttributionConfig
from probeguard.attribution.decide import CAUSES
from probeguard.attribution.recommend import top_fixes
from probeguard.core.artifacts import FROZEN_RESULT, ByKeyModel
from probeguard.core.records import Attribution

__all__ = ["AttributionSummary", "TopFix", "summarize_attribution"]


class TopFix(ByKeyModel):
    """One distinct fix (``recommend.Recommendation``) and how many failures it answers."""

    model_config = FROZEN_RESULT

    cause: str
    title: str
    config_patch: dict[str, Any]
    """Dotted reference-pipeline setting → value."""
    other_pipelines: str
    """The same fix in words, for pipelines other than the reference one."""
    why: str
    cases: int
    """Attributed failures with this fix."""


class AttributionSummary(ByKeyModel):
    """``summary.attribution``: the totals of the attribution pass."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool
    """Whether attribution ran (``attribution.enabled``)."""
    failures: int
    """Failures found: failed golden cases and failed probe groups with failing roles."""
    attributed: int
    """Failures attributed (at most ``max_cases``)."""
    skipped: int
    """Failures over the cap, left unattributed."""
    max_cases: int
    """The cap (``attribution.max_cases``)."""
    swaps: list[str]
    """The swaps tried, in order (``attribution.swaps``)."""
    reruns: int
    """Swapped cases re-run."""
    calls: int | None = Field(default=None, exclude_if=lambda v: v is None)
    """Pipeline calls those re-runs made: a run statistic, which a scan records in
    ``stats.attribution_calls`` and leaves out here (None); kept for older run logs."""
    causes: dict[str, int]
    """Attributed failures per cause, every cause listed (``decide.CAUSES`` order)."""
    per_probe: dict[str, dict[str, int]]
    """Probe (``golden`` for golden cases) → cause → attributed failures."""
    swaps_not_run: dict[str, dict[str, int]]
    """Swap → outcome (``not_applicable``, ``unsupported``, ``error``) → failures."""
    top_fixes: list[TopFix]
    """The distinct fixes, most frequent first (``recommend.top_fixes``)."""
    mechanisms: dict[str, int] | None = Field(default=None, exclude_if=lambda v: v is None)
    """Attributed failures per mechanism of their primary cause (``core.mechanisms`` ids),
    most frequent first (ties by id); None (left out) in run logs written before
    mechanisms were named."""
    contributing: dict[str, int] | None = Field(default=None, exclude_if=lambda v: v is None)
    """Attributed failures per *contributing* cause (``Attribution.contributing``), beside
    the primary cause counted in ``causes``; None (left out) in older run logs."""


def _tally(keys: Sequence[str]) -> dict[str, int]:
    """Counts per key, most frequent first (ties by key)."""
    counts: dict[str, int] = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def summarize_attribution(
    entries: Sequence[Attribution],
    *,
    failures: int,
    config: AttributionConfig,
    reruns: int = 0,
    calls: int = 0,
) -> AttributionSummary:
    """``summary.attribution``: counts per cause (overall and per probe), per mechanism and
    per contributing cause, the swaps that could not run, and the top fixes."""
    counts = {c: sum(1 for e in entries if e.cause == c) for c in CAUSES}
    per_probe: dict[str, dict[str, int]] = {}
    for e in entries:
        row = per_probe.setdefault(e.probe, {})
        row[e.cause] = row.get(e.cause, 0) + 1
    not_run: dict[str, dict[str, int]] = {}
    for e in entries:
        for s in e.swaps:
            if s.outcome in ("not_applicable", "unsupported", "error"):
                row = not_run.setdefault(s.swap, {})
                row[s.outcome] = row.get(s.outcome, 0) + 1
    return AttributionSummary(
        enabled=config.enabled,
        failures=failures,
        attributed=len(entries),
        skipped=max(0, failures - len(entries)),
        max_cases=config.max_cases,
        swaps=list(config.swaps),
        reruns=reruns,
        calls=calls,
        causes=counts,
        per_probe=per_probe,
        swaps_not_run=not_run,
        top_fixes=[
            TopFix.model_validate(f) for f in top_fixes([e.recommendation for e in entries])
        ],
        mechanisms=_tally([e.mechanism or "undetermined" for e in entries]),
        contributing=_tally([c["cause"] for e in entries for c in e.contributing or ()]),
    )

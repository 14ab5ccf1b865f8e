"""The attribution totals of a scan as a run keeps them (``run.json``'s
``summary.attribution``, made by ``engine.summarize_attribution``): how many failures were
found and attributed, counts per cause (overall and per probe), the swaps that could not run,
and the most frequent fixes. Read like the dicts they replace (``core.artifacts.ByKeyModel``).
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict

from probeguard.core.artifacts import FROZEN_RESULT, ByKeyModel

__all__ = ["AttributionSummary", "TopFix"]


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
    calls: int
    """Pipeline calls those re-runs made (cache hits make none)."""
    causes: dict[str, int]
    """Attributed failures per cause, every cause listed (``decide.CAUSES`` order)."""
    per_probe: dict[str, dict[str, int]]
    """Probe (``golden`` for golden cases) → cause → attributed failures."""
    swaps_not_run: dict[str, dict[str, int]]
    """Swap → outcome (``not_applicable``, ``unsupported``, ``error``) → failures."""
    top_fixes: list[TopFix]
    """The distinct fixes, most frequent first (``recommend.top_fixes``)."""

"""The score stage of a scan (``score``), served from a content-addressed cache on a re-run.

Scoring is a pure function of the executed records, the probe plan and context, the config
and the code (DESIGN.md: metrics are pure functions; judges only judge). So, with a cache
folder, its result is stored under ``<cache folder>/scores`` (``engine.derived_cache``) by

    key = sha256(code_version, the probes' modules and names, the config but its runner
                 section, the probe context (engine.plans.context_parts), every executed
                 record's JSON without the fields the clock and the cache set
                 (duration_s, cached, attempts))

and read back on a re-run with the same key. A result is stored only when the one rebuilt
from its JSON has the same ``repr`` as the computed one (``derived_cache.same_repr``), and
never when an LLM judge scores the standard metrics (a remote model is not a pure function of
its inputs). A corrupt or unreadable entry is a miss (logged) and is recomputed.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from probeguard.config.models import ScanConfig
from probeguard.core.artifacts import artifact_json
from probeguard.core.hashing import sha256_hex
from probeguard.core.records import CaseRecord, ProbeGroup
from probeguard.detectors.factory import build_judges
from probeguard.engine.derived_cache import (
    DerivedCache,
    code_version,
    dump_model,
    key_json,
    modules_version,
    parse_model,
    records_digest,
    same_repr,
)
from probeguard.engine.plans import context_parts
from probeguard.metrics.fcs import FCSSummary
from probeguard.metrics.golden import (
    GoldenVerdict,
    golden_verdict,
    score_golden_standard,
    summarize_golden,
    summarize_golden_standard,
)
from probeguard.probes import ProbeContext
from probeguard.probes.evaluate import (
    GroupMembership,
    ProbeJudgment,
    ProbePlan,
    StandardEvalSummary,
    judge_probes,
)
from probeguard.probes.models import ProbeRunSummary, SkippedProbe
from probeguard.results.run import RunSummary

if TYPE_CHECKING:
    from probeguard.engine.stages import Executed, Generated

__all__ = ["SCORES", "Scored", "golden_verdicts", "score", "score_key", "score_records"]

log = logging.getLogger(__name__)

SCORES = "scores"
"""The cache folder's sub-folder for score results."""


@dataclass(frozen=True)
class Scored:
    """The score stage: copies of the records carrying their verdicts, and the summary."""

    records: tuple[CaseRecord, ...]
    """The executed records, in order, each a copy with its verdict's JSON."""
    golden: tuple[tuple[CaseRecord, GoldenVerdict | None], ...]
    """Each golden record (scored copy) with its verdict (None when errored)."""
    probes: ProbeJudgment
    summary: RunSummary
    """Every suite but ``attribution``."""


def golden_verdicts(
    records: Sequence[CaseRecord],
) -> list[tuple[CaseRecord, GoldenVerdict | None]]:
    """Each golden record among ``records`` with its verdict (None when errored)."""
    return [(r, golden_verdict(r)) for r in records if r.case.probe == "golden"]


def score_records(
    config: ScanConfig, plan: ProbePlan, ctx: ProbeContext, records: tuple[CaseRecord, ...]
) -> Scored:
    """Judge the golden questions (and their standard metrics when configured) and the
    probes' groups; summarise each suite. ``records`` are left as they are."""
    verdicts: list[GoldenVerdict | None] = [
        golden_verdict(r) if r.case.probe == "golden" else None for r in records
    ]
    golden_at = [i for i, r in enumerate(records) if r.case.probe == "golden"]
    golden_summary = (
        summarize_golden([(records[i], verdicts[i]) for i in golden_at], seed=config.seed)
        if golden_at
        else None
    )
    if golden_at and config.metrics.standard:
        judges = build_judges(config.judge)
        for i in golden_at:
            standard = score_golden_standard(records[i], judges)
            verdict = verdicts[i]
            if standard is not None and verdict is not None:
                verdicts[i] = verdict.model_copy(update={"standard": standard})
        assert golden_summary is not None
        with_standard = [
            (records[i], v.standard)
            for i in golden_at
            if (v := verdicts[i]) is not None and v.standard is not None
        ]
        golden_summary = golden_summary.model_copy(
            update={
                "standard": summarize_golden_standard(
                    with_standard,
                    seed=config.seed,
                    thresholds=config.eval.thresholds,
                    judge=judges.describe(),
                )
            }
        )
    judged = judge_probes(
        plan,
        records,
        ctx,
        overlap_weights=config.probes.overlap_weights,
        standard=config.standard_eval,
    )
    saved: list[dict[str, Any]] = [artifact_json(v) if v is not None else {} for v in verdicts]
    for i, membership in judged.memberships.items():
        saved[i] = membership.model_dump()
    scored = tuple(r.model_copy(update={"verdict": v}) for r, v in zip(records, saved))
    return Scored(
        records=scored,
        golden=tuple((scored[i], verdicts[i]) for i in golden_at),
        probes=judged,
        summary=RunSummary(
            golden=golden_summary,
            probes=judged.probes,
            standard_eval=judged.standard_eval,
            fcs=judged.fcs,
        ),
    )


class _StoredScore(BaseModel):
    """What the score stage adds to the records: each record's saved verdict, the golden
    verdicts, the probes' judgment and the summary."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=True)

    saved: list[dict[str, Any]]
    golden: list[GoldenVerdict | None]
    groups: list[ProbeGroup]
    memberships: list[tuple[int, GroupMembership]]
    probes: dict[str, ProbeRunSummary | SkippedProbe]
    standard_eval: StandardEvalSummary
    fcs: FCSSummary
    summary: RunSummary


def score(config: ScanConfig, generated: Generated, executed: Executed) -> Scored:
    """``score_records`` of the executed records; read from ``<cache>/scores`` when the
    same records were scored before with the same config and code (module docstring)."""
    plan, ctx, records = generated.plan, generated.ctx, executed.records
    cache_dir = config.runner.cache_dir
    if cache_dir is None or _llm_scores(config):
        return score_records(config, plan, ctx, records)
    store = DerivedCache(Path(cache_dir), SCORES)
    key = score_key(config, plan, ctx, records)
    stored = store.load(key, lambda payload: parse_model(_StoredScore, payload))
    if stored is not None and len(stored.saved) == len(records):
        return _rebuild(stored, records)
    scored = score_records(config, plan, ctx, records)
    _store(store, key, scored)
    return scored


def _llm_scores(config: ScanConfig) -> bool:
    """Whether an LLM judge scores the standard metrics (then nothing is cached)."""
    judge = config.judge
    names = list(judge.consensus.judges) if judge.consensus else [judge.name]
    return config.metrics.standard and ("llm" in names or judge.relevance == "llm")


def _rebuild(stored: _StoredScore, records: Sequence[CaseRecord]) -> Scored:
    """The ``Scored`` value ``stored`` describes, over ``records``."""
    scored = tuple(r.model_copy(update={"verdict": v}) for r, v in zip(records, stored.saved))
    golden_at = [i for i, r in enumerate(records) if r.case.probe == "golden"]
    return Scored(
        records=scored,
        golden=tuple((scored[i], v) for i, v in zip(golden_at, stored.golden)),
        probes=ProbeJudgment(
            groups=stored.groups,
            memberships=dict(stored.memberships),
            probes=stored.probes,
            standard_eval=stored.standard_eval,
            fcs=stored.fcs,
        ),
        summary=stored.summary,
    )


def _store(store: DerivedCache, key: str, scored: Scored) -> None:
    """Store ``scored`` when the value rebuilt from its JSON is the same (else skip)."""
    judged = scored.probes
    stored = _StoredScore(
        saved=[r.verdict for r in scored.records],
        golden=[v for _, v in scored.golden],
        groups=judged.groups,
        memberships=list(judged.memberships.items()),
        probes=judged.probes,
        standard_eval=judged.standard_eval,
        fcs=judged.fcs,
        summary=scored.summary,
    )
    payload = dump_model(stored)
    rebuilt = _rebuild(parse_model(_StoredScore, payload), scored.records)
    if not same_repr(rebuilt, scored):
        log.debug("score cache: the result does not round-trip through JSON; not cached")
        return
    store.put(key, payload)


def score_key(
    config: ScanConfig, plan: ProbePlan, ctx: ProbeContext, records: Sequence[CaseRecord]
) -> str:
    """The content address of a score stage (see the module docstring)."""
    return sha256_hex(
        "score/1",
        code_version(),
        modules_version(type(p).__module__ for p in plan.probes),
        key_json([p.name for p in plan.probes]),
        key_json(config, exclude={"runner"}),
        *context_parts(ctx),
        "records",
        records_digest(records),
    )

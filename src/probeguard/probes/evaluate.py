"""Running probes inside a scan: build the probe context from the pipeline, generate every
probe's cases, and — after the runner has executed them — judge the groups, summarise each
probe, and compute the standard-evaluation baseline and the Failure Coverage Score."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from probeguard.core.cases import Case
from probeguard.core.documents import Document
from probeguard.core.errors import InputError
from probeguard.core.pipeline import Pipeline
from probeguard.core.records import CaseRecord, ProbeGroup
from probeguard.metrics.answer import standard_eval_failed
from probeguard.metrics.config import StandardEvalConfig
from probeguard.metrics.fcs import failure_coverage_score
from probeguard.probes import JudgeContext, Probe, ProbeContext, group_records, make_probe
from probeguard.probes.config import ProbesConfig
from probeguard.stats import proportion

DEFAULT_TOP_K = 5


def probe_context(
    pipeline: Pipeline,
    documents: Sequence[Document],
    questions: Sequence[Case],
    *,
    seed: int,
    top_k: int | None = None,
    attack_cases: Sequence[Case] = (),
) -> ProbeContext:
    """What probes may know about the pipeline: its capabilities, and — for the reference
    pipeline — its retrieval depth, chunks and chunker; ``attack_cases`` for the
    ``attack_types`` probe."""
    reference_config = getattr(pipeline, "config", None)
    chunks = getattr(pipeline, "chunks", None)
    return ProbeContext(
        documents=tuple(documents),
        questions=tuple(questions),
        seed=seed,
        top_k=top_k or getattr(reference_config, "top_k", None) or DEFAULT_TOP_K,
        capabilities=frozenset(pipeline.capabilities),
        chunks=tuple(chunks) if chunks is not None else None,
        chunker=getattr(reference_config, "chunker", None),
        attack_cases=tuple(attack_cases),
    )


@dataclass
class ProbePlan:
    """The probes that run on this pipeline, their cases, and those skipped (with why)."""

    probes: list[Probe]
    cases: list[Case]
    skipped: dict[str, str] = field(default_factory=dict)


def plan_probes(config: ProbesConfig, ctx: ProbeContext) -> ProbePlan:
    plan = ProbePlan(probes=[], cases=[])
    unknown_settings = sorted(set(config.settings) - set(config.enabled))
    if unknown_settings:
        raise InputError(
            f"settings given for probes that are not enabled: {', '.join(unknown_settings)}",
            field="probes.settings",
        )
    for name in config.enabled:
        try:
            p = make_probe(name, config.settings.get(name))
        except (ValueError, TypeError) as exc:
            field = f"probes.settings.{name}" if name in config.settings else "probes.enabled"
            raise InputError(str(exc), field=field) from None
        missing = p.requires - ctx.capabilities
        if missing:
            plan.skipped[name] = (
                f"the pipeline lacks the capabilities {', '.join(sorted(str(m) for m in missing))}"
            )
            continue
        plan.probes.append(p)
        plan.cases.extend(p.generate(ctx))
    return plan


def judge_probes(
    plan: ProbePlan,
    records: Sequence[CaseRecord],
    ctx: ProbeContext,
    *,
    overlap_weights: dict[str, float],
    standard: StandardEvalConfig,
) -> tuple[list[ProbeGroup], dict[str, Any]]:
    """Group verdicts and the summary entries ``probes``, ``standard_eval`` and ``fcs``."""
    jctx = JudgeContext(probe=ctx)
    groups: list[ProbeGroup] = []
    probe_summaries: dict[str, Any] = {}
    rates: dict[str, float] = {}
    # A probe's own weight, unless the config says otherwise.
    weights = {**{p.name: p.overlap_weight for p in plan.probes}, **overlap_weights}
    for p in plan.probes:
        verdicts = []
        for group, by_role in group_records(records, p.name).items():
            verdict = p.judge(group, by_role, jctx)
            verdicts.append(verdict)
            groups.append(
                ProbeGroup(
                    probe=p.name,
                    group=group,
                    failed=verdict.failed,
                    case_ids=[r.case.id for r in by_role.values()],
                    evidence=verdict.evidence.model_dump(),
                )
            )
            for record in by_role.values():
                record.verdict = {"group": group, "group_failed": verdict.failed}
        summary = p.summarize(verdicts).model_dump()
        summary.update(
            goal=p.goal, overlap_weight=weights.get(p.name, p.overlap_weight), settings=p.config()
        )
        probe_summaries[p.name] = summary
        rate = summary["failure_rate"]["value"]
        if rate is not None and not math.isnan(rate):
            rates[p.name] = rate
    for name, reason in plan.skipped.items():
        probe_summaries[name] = {"skipped": reason}
    fcs = failure_coverage_score(rates, weights)
    summary = {
        "probes": probe_summaries,
        "standard_eval": standard_eval_summary(records, standard),
        "fcs": {
            "value": fcs.fcs,
            "adversarial_failure_rate": fcs.adversarial_union_rate,
            "adversarial_unique_rate": fcs.adversarial_unique_rate,
            "overlap_weights": {p: weights.get(p, 0.0) for p in sorted(rates)},
            "interpretation": fcs.interpretation(),
            "recommendation": fcs.recommendation(rates),
        },
    }
    return groups, summary


def standard_eval_summary(
    records: Sequence[CaseRecord], config: StandardEvalConfig
) -> dict[str, Any]:
    """The standard-evaluation failure rate over the golden answerable questions: ROUGE-L
    (``config.measure``) of the answer against the gold answers below ``config.threshold``."""
    flags = [
        standard_eval_failed(
            r.output.answer,
            r.case.expected.answers,
            threshold=config.threshold,
            measure=config.measure,
        )
        for r in records
        if r.case.probe == "golden"
        and r.output is not None
        and r.case.expected.mode == "answer"
        and r.case.expected.answers
    ]
    return {
        "failure_rate": proportion(flags).model_dump(),
        "measure": f"rougeL_{config.measure}",
        "threshold": config.threshold,
    }

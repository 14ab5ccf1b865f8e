"""Running probes inside a scan: build the probe context from the pipeline, generate every
probe's cases (``plan_probes``), and — after the runner has executed them — judge the groups,
summarise each probe, and compute the standard-evaluation baseline and the Failure Coverage
Score (``judge_probes``), seed formula and empirical one (``empirical_summary``). Nothing here changes a record: judging returns the groups and each
probe case's ``GroupMembership``, which the engine's score stage saves on copies."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from probeguard.core.artifacts import FROZEN_RESULT, JsonEstimate
from probeguard.core.cases import Case
from probeguard.core.documents import Document
from probeguard.core.errors import InputError
from probeguard.core.pipeline import Pipeline
from probeguard.core.records import CaseRecord, ProbeGroup
from probeguard.metrics.answer import standard_eval_failed
from probeguard.metrics.config import StandardEvalConfig
from probeguard.metrics.fcs import (
    EmpiricalFCS,
    FCSSummary,
    QuestionOutcome,
    empirical_fcs,
    failure_coverage_score,
)
from probeguard.metrics.golden import golden_verdict
from probeguard.probes import JudgeContext, Probe, ProbeContext, group_records, make_probe
from probeguard.probes.base import ProbeVerdict
from probeguard.probes.config import ProbesConfig
from probeguard.probes.models import ProbeRunSummary, SkippedProbe
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


@dataclass(frozen=True)
class ProbePlan:
    """The probes that run on this pipeline, their cases, and those skipped (with why)."""

    probes: list[Probe]
    cases: list[Case]
    skipped: dict[str, str] = field(default_factory=dict)


class GroupMembership(BaseModel):
    """A probe case's verdict, as saved in its record: its group and whether that failed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    group: str
    group_failed: bool | None
    """None: the group could not be judged."""


class StandardEvalSummary(BaseModel):
    """The standard-evaluation baseline: how often ROUGE-L against the gold answers calls
    an answerable golden question failed (``standard_eval_summary``)."""

    model_config = FROZEN_RESULT

    failure_rate: JsonEstimate
    """Wilson 95% interval over the answered golden questions with gold answers."""
    measure: str
    """``rougeL_<measure>``."""
    threshold: float
    """A score below it is a failure."""


@dataclass(frozen=True)
class ProbeJudgment:
    """What judging the probes gives (``judge_probes``)."""

    groups: list[ProbeGroup]
    """One verdict per probe group, probe by probe."""
    memberships: Mapping[int, GroupMembership]
    """Position of a probe case in the judged records → its group membership."""
    probes: dict[str, ProbeRunSummary | SkippedProbe]
    """``summary.probes``: each probe's summary, or why it was skipped."""
    standard_eval: StandardEvalSummary
    fcs: FCSSummary
    """``summary.fcs``: the Failure Coverage Score and its reading."""


def plan_probes(config: ProbesConfig, ctx: ProbeContext) -> ProbePlan:
    """The enabled probes this pipeline can run, with their cases (``InputError`` naming
    the setting for an unknown probe or bad settings)."""
    probes, skipped = enabled_probes(config, ctx)
    return ProbePlan(probes=probes, cases=generate_cases(probes, ctx), skipped=skipped)


def enabled_probes(config: ProbesConfig, ctx: ProbeContext) -> tuple[list[Probe], dict[str, str]]:
    """The enabled probes this pipeline can run, configured, and those skipped (with why);
    ``InputError`` naming the setting for an unknown probe or bad settings."""
    probes: list[Probe] = []
    skipped: dict[str, str] = {}
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
            skipped[name] = (
                f"the pipeline lacks the capabilities {', '.join(sorted(str(m) for m in missing))}"
            )
            continue
        probes.append(p)
    return probes, skipped


def generate_cases(probes: Sequence[Probe], ctx: ProbeContext) -> list[Case]:
    """Every probe's cases, probe by probe (``Probe.generate``)."""
    return [case for p in probes for case in p.generate(ctx)]


def judge_groups(
    probe: Probe, records: Sequence[CaseRecord], jctx: JudgeContext
) -> list[tuple[str, dict[str, CaseRecord], ProbeVerdict]]:
    """``(group, records by role, verdict)`` for each of ``probe``'s groups in ``records``."""
    return [
        (group, by_role, probe.judge(group, by_role, jctx))
        for group, by_role in group_records(records, probe.name).items()
    ]


def judge_probes(
    plan: ProbePlan,
    records: Sequence[CaseRecord],
    ctx: ProbeContext,
    *,
    overlap_weights: dict[str, float],
    standard: StandardEvalConfig,
) -> ProbeJudgment:
    """Group verdicts, memberships and the summary entries ``probes``, ``standard_eval``
    and ``fcs``. ``records`` are left as they are."""
    jctx = JudgeContext(probe=ctx)
    position = {id(r): i for i, r in enumerate(records)}
    groups: list[ProbeGroup] = []
    memberships: dict[int, GroupMembership] = {}
    probe_summaries: dict[str, ProbeRunSummary | SkippedProbe] = {}
    rates: dict[str, float] = {}
    about: list[tuple[str | None, bool | None]] = []
    # A probe's own weight, unless the config says otherwise.
    weights = {**{p.name: p.overlap_weight for p in plan.probes}, **overlap_weights}
    for p in plan.probes:
        verdicts = []
        for group, by_role, verdict in judge_groups(p, records, jctx):
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
            about.append((group_question(groups[-1].evidence, by_role), verdict.failed))
            for record in by_role.values():
                memberships[position[id(record)]] = GroupMembership(
                    group=group, group_failed=verdict.failed
                )
        summary = ProbeRunSummary.of(
            p.summarize(verdicts),
            goal=p.goal,
            overlap_weight=weights.get(p.name, p.overlap_weight),
            settings=p.config(),
        )
        probe_summaries[p.name] = summary
        rate = summary.failure_rate.value
        if not math.isnan(rate):
            rates[p.name] = rate
    for name, reason in plan.skipped.items():
        probe_summaries[name] = SkippedProbe(skipped=reason)
    fcs = failure_coverage_score(rates, weights)
    return ProbeJudgment(
        groups=groups,
        memberships=memberships,
        probes=probe_summaries,
        standard_eval=standard_eval_summary(records, standard),
        fcs=FCSSummary(
            value=fcs.fcs,
            adversarial_failure_rate=fcs.adversarial_union_rate,
            adversarial_unique_rate=fcs.adversarial_unique_rate,
            overlap_weights={p: weights.get(p, 0.0) for p in sorted(rates)},
            interpretation=fcs.interpretation(),
            recommendation=fcs.recommendation(rates),
            empirical=empirical_summary(records, about, seed=ctx.seed),
        ),
    )


def group_question(evidence: Mapping[str, Any], by_role: Mapping[str, CaseRecord]) -> str | None:
    """The golden question a probe group is about: the ``question_id`` its evidence names,
    else the one ``question_id`` that every case of the group carrying one has in its meta
    (generated attack cases); None when there is none or they differ (attack cases from the
    dataset, invented questions, corpus documents)."""
    named = evidence.get("question_id")
    if isinstance(named, str) and named:
        return named
    ids = {
        str(r.case.meta["question_id"]) for r in by_role.values() if "question_id" in r.case.meta
    }
    return ids.pop() if len(ids) == 1 else None


def empirical_summary(
    records: Sequence[CaseRecord], about: Sequence[tuple[str | None, bool | None]], *, seed: int
) -> EmpiricalFCS:
    """The empirical FCS (``metrics.fcs.empirical_fcs``) of a scan. ``about`` holds each probe
    group's question (``group_question``) and verdict. A golden question fails standard
    evaluation when its golden verdict (``metrics.golden.golden_verdict``) fails, and a probe
    when one of the groups about it failed; an errored golden question is unscored, and a
    failed group about no golden question (or one not in the golden set) is counted apart."""
    standard: dict[str, bool | None] = {}
    for r in records:
        if r.case.probe == "golden":
            verdict = golden_verdict(r)
            failed = None if verdict is None else not verdict.passed
            previous = standard.get(r.case.id)
            standard[r.case.id] = failed if previous is None else previous or bool(failed)
    adversarial = {q for q, failed in about if failed and q is not None}
    outcomes = [
        QuestionOutcome(standard_failed=failed, adversarial_failed=q in adversarial)
        for q, failed in standard.items()
        if failed is not None
    ]
    return empirical_fcs(
        outcomes,
        seed=seed,
        unscored_questions=sum(1 for failed in standard.values() if failed is None),
        failed_groups_without_question=sum(
            1 for q, failed in about if failed and (q is None or q not in standard)
        ),
    )


def standard_eval_summary(
    records: Sequence[CaseRecord], config: StandardEvalConfig
) -> StandardEvalSummary:
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
    return StandardEvalSummary(
        failure_rate=proportion(flags),
        measure=f"rougeL_{config.measure}",
        threshold=config.threshold,
    )

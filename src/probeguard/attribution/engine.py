"""The attribution pass of a scan: plan the swaps of every failure, run them all through the
runner in **one** extra pass, re-judge each failure with the swapped records in place of the
failing ones, and decide its cause (``decide``) and fix (``recommend``).

**Failures.** A failed golden case (its verdict has ``passed: false``; errored cases are not
attributed), and a failed probe group, whose *failing roles* its probe names from the group's
evidence (``Probe.failing_roles``: e.g. the hijacked styles, the paraphrases that lost the
evidence; by default every role but the controls); roles without an output are left out.

**Repaired.** A swap runs on every failing role of the failure (case id
``attribution:<swap>:<case id>``, not part of ``run.jsonl``); the failure is *repaired* when
re-judging with those records in place passes: ``score_golden_record(...)["passed"]`` for a
golden case, ``probe.judge(group, records_with_roles_replaced, ctx).failed is False`` for a
probe group (an unscored re-judgment is *not repaired*). The oracle's contexts come back with
doc id ``oracle``; they are relabelled with the gold document each one is, so rank-based
judges see the gold evidence where it was put. A swap with an errored re-run is ``error``
(``unsupported`` when the error is ``UnsupportedCapabilityError``); a swap that is not
applicable or not supported for some role is so for the failure.

**Observed** (``decide.Observed``): the first failing role's output — the gold evidence among
the retrieved documents (every gold document: a multi-hop case that retrieved one of its two
still misses evidence the oracle hands over); the answer *supported* when at least ``SUPPORT`` of its content words
(citations stripped) occur in the retrieved texts; an *injected instruction* when a document
the case injected holds an attack phrase (``nlp.attack_phrases``).

**Mechanism.** Each verdict names how its cause failed (``core.mechanisms`` id and words): the
failing probe's own reading of its evidence (``Probe.failure_mechanism``) when it gives one,
else the surgeon's (``mechanisms.read_mechanism``), which also names each contributing cause.

**Reference pipeline.** ``pipeline_config`` is the reference pipeline's config (empty for any
other pipeline): only then do recommendations carry a ``config_patch`` and a gate its backend.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from probeguard.attribution.config import AttributionConfig
from probeguard.attribution.decide import Decision, Observed, adopt_probe_reading, decide
from probeguard.attribution.mechanisms import SUPPORT, FailureFacts, read_mechanism, supported_by
from probeguard.attribution.recommend import (
    CaseFacts,
    Recommendation,
    recommend,
    trusted_source_globs,
)
from probeguard.attribution.summary import AttributionSummary, summarize_attribution
from probeguard.attribution.swaps import SwapPlan, plan_swap, reranks
from probeguard.core.cases import Case
from probeguard.core.documents import Document
from probeguard.core.mechanisms import describe
from probeguard.core.pipeline import ORACLE_DOC_ID, Capability, PipelineOutput
from probeguard.core.records import Attribution, CaseRecord, ProbeGroup, SwapOutcome, SwapRun
from probeguard.metrics.gate import best_gate, gate_scores
from probeguard.metrics.golden import score_golden_record
from probeguard.nlp.attack_phrases import attack_phrases
from probeguard.nlp.text import CITATION_MARKER, content_words
from probeguard.probes.base import JudgeContext, Probe, ProbeContext, group_records
from probeguard.runner.prepare import prepare_run

__all__ = [
    "AttributionResult",
    "Failure",
    "SUPPORT",
    "attribute",
    "failing_roles",
    "find_failures",
    "observe",
    "summarize_attribution",
]


@dataclass
class Failure:
    """One failure to attribute: its records by role and which roles failed."""

    kind: str
    probe: str
    group: str
    records: dict[str, CaseRecord]
    roles: tuple[str, ...]
    probe_obj: Probe[Any] | None = None
    evidence: dict[str, Any] = field(default_factory=dict)


def failing_roles(
    probe: Probe[Any], evidence: Mapping[str, Any], by_role: Mapping[str, CaseRecord]
) -> tuple[str, ...]:
    """The roles that made a group fail, as ``probe`` names them from the group's evidence
    (as ``run.json`` keeps it), that have an output to re-run."""
    roles = probe.failing_roles(probe.read_evidence(evidence), tuple(by_role))
    return tuple(r for r in roles if r in by_role and by_role[r].output is not None)


def find_failures(
    records: Sequence[CaseRecord], groups: Sequence[ProbeGroup], probes: Sequence[Probe]
) -> list[Failure]:
    """Failed golden cases (record order), then failed probe groups (group order)."""
    out = [
        Failure("golden", "golden", r.case.id, {"case": r}, ("case",))
        for r in records
        if r.case.probe == "golden" and r.output is not None and r.verdict.get("passed") is False
    ]
    by_name = {p.name: p for p in probes}
    grouped = {name: group_records(records, name) for name in by_name}
    for g in groups:
        if not g.failed or g.probe not in by_name:
            continue
        by_role = grouped[g.probe].get(g.group, {})
        roles = failing_roles(by_name[g.probe], g.evidence, by_role)
        if roles:
            out.append(
                Failure(
                    "probe",
                    g.probe,
                    g.group,
                    dict(by_role),
                    roles,
                    by_name[g.probe],
                    dict(g.evidence),
                )
            )
    return out


def observe(record: CaseRecord) -> Observed:
    """``Observed`` from one failing output (module docstring)."""
    out = record.output
    exp = record.case.expected
    injected = any(attack_phrases(d.text) for d in record.case.variation.overlay)
    if out is None:
        return Observed(abstain=exp.mode == "abstain", injected_instruction=injected)
    docs = [r.doc_id for r in out.retrieved]
    gold = all(d in docs for d in exp.evidence_doc_ids) if exp.evidence_doc_ids and docs else None
    supported = None
    if content_words(CITATION_MARKER.sub(" ", out.answer)) and out.retrieved and not out.refused:
        supported = supported_by(out.answer, " ".join(r.text for r in out.retrieved))
    return Observed(
        abstain=exp.mode == "abstain",
        gold_retrieved=gold,
        answer_supported=supported,
        injected_instruction=injected,
    )


@dataclass
class AttributionResult:
    entries: list[Attribution]
    summary: AttributionSummary


def _swap_case(case: Case, plan: SwapPlan) -> Case:
    assert plan.variation is not None
    return case.model_copy(
        update={
            "id": f"attribution:{plan.name}:{case.id}",
            "variation": plan.variation,
            "meta": {**case.meta, "attribution": {"swap": plan.name, "of": case.id}},
        }
    )


def _relabel_oracle(record: CaseRecord, gold: Sequence[str]) -> CaseRecord:
    out = record.output
    if out is None or not gold:
        return record
    retrieved = [
        r.model_copy(update={"doc_id": gold[i]})
        if r.doc_id == ORACLE_DOC_ID and i < len(gold)
        else r
        for i, r in enumerate(sorted(out.retrieved, key=lambda r: r.rank))
    ]
    return record.model_copy(update={"output": out.model_copy(update={"retrieved": retrieved})})


def _scalars(evidence: Mapping[str, Any]) -> dict[str, Any]:
    return {
        k: v
        for k, v in evidence.items()
        if isinstance(v, (str, int, float, bool))
        or v is None
        or (isinstance(v, list) and all(isinstance(x, (str, int)) for x in v))
    }


def _run_evidence(record: CaseRecord) -> SwapRun:
    out: PipelineOutput | None = record.output
    return SwapRun(
        case_id=record.case.id,
        of=str(record.case.meta["attribution"]["of"]),
        call_key=record.call_key,
        answer=out.answer if out is not None else None,
        refused=out.refused if out is not None else None,
        retrieved_doc_ids=[r.doc_id for r in sorted(out.retrieved, key=lambda r: r.rank)]
        if out is not None
        else [],
        error=record.error,
    )


def _combine(plans: Sequence[SwapPlan]) -> tuple[str, str]:
    """A failure's status for one swap from its roles' plans."""
    if all(p.status == "run" for p in plans):
        return "run", ""
    bad = next(p for p in plans if p.status != "run")
    status = "unsupported" if any(p.status == "unsupported" for p in plans) else bad.status
    return status, next(p.reason for p in plans if p.status == status)


def _facts(
    failure: Failure,
    plans: Mapping[str, list[SwapPlan]],
    documents: Mapping[str, Document],
    pipeline_config: Mapping[str, Any],
    calibrated_gate: Mapping[str, Any] | None = None,
    trusted_sources: tuple[str, ...] = (),
) -> CaseFacts:
    record = failure.records[failure.roles[0]]
    case = record.case
    removed = [d for p in plans.get("clean_corpus", []) for d in p.removed_doc_ids]
    statuses = tuple(
        sorted({str(documents[d].metadata.get("status", "")) for d in removed if d in documents})
    )
    out = record.output
    scores = [r.score for r in out.retrieved if r.score is not None] if out else []
    probe = failure.probe_obj
    return CaseFacts(
        hints=probe.case_fix_hints(case) if probe is not None else frozenset(),
        abstain=case.expected.mode == "abstain",
        removed_statuses=statuses,
        top_score=max(scores) if scores else None,
        backend=_backend(case, pipeline_config),
        pipeline=pipeline_config,
        reference=bool(pipeline_config),
        calibrated_gate=dict(calibrated_gate) if calibrated_gate else None,
        trusted_sources=trusted_sources,
        injected=bool(case.variation.overlay),
    )


def _failure_facts(
    failure: Failure,
    evidence: Sequence[SwapOutcome],
    documents: Mapping[str, Document],
    pipeline_config: Mapping[str, Any],
    observed: Observed,
    top_k: int,
) -> FailureFacts:
    """What the mechanism reading rests on (``mechanisms.FailureFacts``)."""
    record = failure.records[failure.roles[0]]
    case, out = record.case, record.output
    swaps = {s.swap: s for s in evidence}
    clean = swaps.get("clean_corpus")
    removed = clean.removed_doc_ids if clean is not None else []
    return FailureFacts(
        observed=observed,
        answer=out.answer if out is not None else "",
        refused=bool(out is not None and out.refused),
        retrieved_ids=tuple(r.doc_id for r in sorted(out.retrieved, key=lambda r: r.rank))
        if out is not None
        else (),
        gold=tuple(documents[d] for d in case.expected.evidence_doc_ids if d in documents),
        injected=tuple(case.variation.overlay),
        removed=tuple(documents[d] for d in removed if d in documents),
        swaps=swaps,
        backend=_backend(case, pipeline_config),
        reranked=reranks(pipeline_config),
        top_k=int(case.variation.retrieval.get("top_k", top_k)),
        gated=_gated(out),
    )


def _gated(out: PipelineOutput | None) -> bool:
    """The output passed a refusal gate set for its backend: its defence report names the
    gate's ``min_score`` (``pipeline.reference``); False when it reports none."""
    report = (out.metadata.get("defences") or {}) if out is not None else {}
    gate = report.get("gate") if isinstance(report, dict) else None
    return isinstance(gate, dict) and gate.get("min_score") is not None


def _backend(case: Case, pipeline_config: Mapping[str, Any]) -> str | None:
    """The retrieval backend a reference pipeline used for ``case`` (the case's own mode,
    else the configured retriever); None for any other pipeline (not known)."""
    if not pipeline_config:
        return None
    mode = case.variation.retrieval.get("mode")
    return str(mode or (pipeline_config.get("retriever") or {}).get("name") or "") or None


def _mechanism(failure: Failure, cause: str, facts: FailureFacts) -> tuple[str, str]:
    """(mechanism id, who named it): the failing probe's own reading of its evidence
    (``Probe.failure_mechanism``) when it has one, else the surgeon's
    (``mechanisms.read_mechanism``)."""
    probe = failure.probe_obj
    if probe is not None:
        named = probe.failure_mechanism(probe.read_evidence(failure.evidence), cause)
        if named:
            return named, "probe"
    return read_mechanism(cause, facts), "surgeon"


def _entry(
    failure: Failure,
    decision: Decision,
    observed: Observed,
    evidence: list[SwapOutcome],
    rec: Recommendation | None,
    mechanism: str,
    by: str,
    facts: FailureFacts,
) -> Attribution:
    """The verdict on one failure as ``run.json`` keeps it."""
    contributing = []
    for cause, named in decision.contributing:
        mechanism_id = read_mechanism(cause, facts) if cause == "retriever" else named
        contributing.append(
            {"cause": cause, "mechanism": mechanism_id, "words": describe(mechanism_id)}
        )
    return Attribution(
        kind=failure.kind,
        probe=failure.probe,
        group=failure.group,
        case_ids=[failure.records[r].case.id for r in failure.roles],
        cause=decision.cause,
        also=list(decision.also),
        reason=decision.reason,
        basis=decision.basis,
        row=decision.row,
        notes=list(decision.notes),
        observed={
            "abstain": observed.abstain,
            "gold_retrieved": observed.gold_retrieved,
            "answer_supported": observed.answer_supported,
            "injected_instruction": observed.injected_instruction,
        },
        swaps=evidence,
        recommendation=rec.as_dict() if rec else None,
        mechanism=mechanism,
        mechanism_words=describe(mechanism),
        mechanism_by="probe" if by == "probe" else "surgeon",
        contributing=contributing,
    )


def attribute(
    records: Sequence[CaseRecord],
    groups: Sequence[ProbeGroup],
    probes: Sequence[Probe],
    ctx: ProbeContext,
    runner: Any,
    config: AttributionConfig | None = None,
    *,
    capabilities: frozenset[Capability] | None = None,
    pipeline_config: Mapping[str, Any] | None = None,
    jctx: JudgeContext | None = None,
) -> AttributionResult:
    """Attribute the failures among ``records``/``groups`` (module docstring). ``runner``
    is a ``Runner`` over the scanned pipeline; it makes every re-run, in one ``run`` call.
    ``pipeline_config``: the reference pipeline's config; empty or None for any other
    pipeline (recommendations are then sentences, without a patch)."""
    config = config or AttributionConfig()
    caps = frozenset(capabilities if capabilities is not None else ctx.capabilities)
    pcfg = dict(pipeline_config or {})
    jctx = jctx or JudgeContext(probe=ctx)
    documents = {d.id: d for d in ctx.documents}
    # The refusal gate a generator fix recommends is calibrated on the whole run: the top
    # retrieval scores of answerable golden questions against unanswerable ones.
    calibrated = best_gate(*gate_scores(records))
    trusted = trusted_source_globs([d.source for d in ctx.documents])
    failures = find_failures(records, groups, probes)
    chosen = failures[: config.max_cases] if config.enabled else []
    planned: list[dict[str, list[SwapPlan]]] = []
    cases: dict[str, Case] = {}
    for failure in chosen:
        plans: dict[str, list[SwapPlan]] = {}
        for name in config.swaps:
            for role in failure.roles:
                record = failure.records[role]
                named = [str(d) for d in (record.case.meta.get("premise_doc_id"),) if d]
                plan = plan_swap(
                    name,
                    record.case,
                    documents=documents,
                    capabilities=caps,
                    top_k=ctx.top_k,
                    named_conflicts=named,
                    retrieved=record.output.retrieved if record.output else (),
                    reranked=reranks(pcfg),
                )
                plans.setdefault(name, []).append(plan)
            if _combine(plans[name])[0] == "run":
                for role, plan in zip(failure.roles, plans[name]):
                    swapped_case = _swap_case(failure.records[role].case, plan)
                    cases.setdefault(swapped_case.id, swapped_case)
        planned.append(plans)
    if cases:
        prepare_run(runner, list(cases.values()))  # e.g. whole-document swaps' index
    result = runner.run(list(cases.values())) if cases else None
    reruns = {r.case.id: r for r in result.records} if result is not None else {}

    entries = []
    for failure, plans in zip(chosen, planned):
        outcomes: dict[str, str] = {}
        evidence: list[SwapOutcome] = []
        for name, role_plans in plans.items():
            status, reason = _combine(role_plans)
            if status != "run":
                outcomes[name] = status
                evidence.append(SwapOutcome(swap=name, outcome=status, reason=reason))
                continue
            swapped: dict[str, CaseRecord] = {}
            for role, plan in zip(failure.roles, role_plans):
                rec = reruns[f"attribution:{name}:{failure.records[role].case.id}"]
                swapped[role] = _relabel_oracle(rec, plan.gold_doc_ids)
            runs = [_run_evidence(r) for r in swapped.values()]
            removed = sorted({d for p in role_plans for d in p.removed_doc_ids})
            errors = [r.error for r in swapped.values() if r.error is not None]
            if errors:
                outcome = (
                    "unsupported" if errors[0].type == "UnsupportedCapabilityError" else "error"
                )
                outcomes[name] = outcome
                evidence.append(
                    SwapOutcome(
                        swap=name,
                        outcome=outcome,
                        runs=runs,
                        removed_doc_ids=removed,
                        reason=f"{errors[0].type}: {errors[0].message}",
                    )
                )
                continue
            if failure.kind == "golden":
                judged = score_golden_record(swapped["case"])
                repaired = judged.get("passed") is True
            else:
                assert failure.probe_obj is not None
                verdict = failure.probe_obj.judge(
                    failure.group, {**failure.records, **swapped}, jctx
                )
                judged = {"failed": verdict.failed, **_scalars(verdict.evidence.model_dump())}
                repaired = verdict.failed is False
            outcomes[name] = "repaired" if repaired else "not_repaired"
            evidence.append(
                SwapOutcome(
                    swap=name,
                    outcome=outcomes[name],
                    runs=runs,
                    removed_doc_ids=removed,
                    judged=judged,
                )
            )
        observed = observe(failure.records[failure.roles[0]])
        decision = decide(outcomes, observed)
        facts = _failure_facts(failure, evidence, documents, pcfg, observed, ctx.top_k)
        mechanism, by = _mechanism(failure, decision.cause, facts)
        if by == "probe":
            decision = adopt_probe_reading(
                decision, failure.probe, mechanism, read_mechanism(decision.cause, facts)
            )
        case_facts = _facts(failure, plans, documents, pcfg, calibrated, trusted)
        rec = recommend(decision.cause, replace(case_facts, mechanism=mechanism))
        entries.append(_entry(failure, decision, observed, evidence, rec, mechanism, by, facts))
    summary = summarize_attribution(
        entries,
        failures=len(failures),
        config=config,
        reruns=len(cases),
        calls=result.stats.calls if result is not None else 0,
    )
    return AttributionResult(entries, summary)

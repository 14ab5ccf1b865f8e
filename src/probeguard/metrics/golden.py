"""Scoring golden questions: retrieval against gold evidence, answer containment, refusals.

Per case (``score_golden_record``):
- ``evidence_rank``: best rank of a gold evidence document among the retrieved chunks;
- ``hit``: some gold document was retrieved (the pipeline's top-k);
- ``all_evidence``: every gold document was retrieved (multi-hop needs all);
- ``rr``: reciprocal rank of the first gold document;
- ``contains``: the answer holds one of the gold answers (SQuAD-normalised containment);
- ``refused``; ``passed``: mode ``answer`` → contains and not refused; mode ``abstain`` →
  refused.

Summary (``summarize_golden``): each rate a Wilson 95% interval over the cases where it is
defined (retrieval rates over answerable cases with evidence; answer rates over answerable
cases; abstention over unanswerable cases); MRR with a seeded bootstrap interval.

Standard metrics (``score_golden_standard``, ``summarize_golden_standard``): the metrics of
``probeguard eval`` (``evaluation.standard``) on each answered golden case of mode ``answer``
with gold answers — the answer and the retrieved chunks (rank order) judged once; the first
gold answer is the ground truth of context recall, all of them count for EM/F1/containment;
context precision uses the gold evidence documents as reference labels when the case names
them, else the judge. Abstention cases are left out (a correct refusal has no claims to be
faithful with, and answer relevancy would punish it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from probeguard.core.io import json_safe
from probeguard.core.pipeline import Context
from probeguard.core.records import CaseRecord
from probeguard.metrics.judged import relevance_from_gold
from probeguard.metrics.retrieval import first_relevant_rank, recall_of, reciprocal_rank
from probeguard.metrics.standard import score_standard
from probeguard.metrics.summary import summarize_values
from probeguard.metrics.thresholds import check_thresholds
from probeguard.nlp.text import contains_answer
from probeguard.stats import bootstrap_mean, proportion

if TYPE_CHECKING:
    from probeguard.detectors.factory import Judges
    from probeguard.metrics.config import Thresholds


def score_golden_record(record: CaseRecord) -> dict[str, Any]:
    """The verdict for one golden case (empty dict for an errored case)."""
    out = record.output
    if out is None:
        return {}
    exp = record.case.expected
    ranked_docs = [r.doc_id for r in sorted(out.retrieved, key=lambda r: r.rank)]
    verdict: dict[str, Any] = {"refused": out.refused}
    if exp.evidence_doc_ids:
        rank = first_relevant_rank(ranked_docs, exp.evidence_doc_ids)
        verdict.update(
            evidence_rank=rank,
            hit=rank is not None,
            all_evidence=recall_of(ranked_docs, exp.evidence_doc_ids) == 1.0,
            rr=reciprocal_rank(ranked_docs, exp.evidence_doc_ids),
        )
    if exp.mode == "abstain":
        verdict["passed"] = out.refused
    else:
        contains = any(contains_answer(out.answer, a) for a in exp.answers)
        verdict["contains"] = contains
        verdict["passed"] = contains and not out.refused
    return verdict


def summarize_golden(records: Sequence[CaseRecord], seed: int) -> dict[str, Any]:
    """Rates with intervals over scored golden records (see module doc)."""
    scored = [(r, r.verdict) for r in records if r.output is not None]
    answerable = [(r, v) for r, v in scored if r.case.expected.mode != "abstain"]
    with_evidence = [v for r, v in answerable if "hit" in v]
    unanswerable = [v for r, v in scored if r.case.expected.mode == "abstain"]
    summary = {
        "cases": len(records),
        "errors": sum(1 for r in records if r.output is None),
        "retrieval_hit_at_k": proportion([v["hit"] for v in with_evidence]),
        "retrieval_all_evidence": proportion([v["all_evidence"] for v in with_evidence]),
        "mrr": bootstrap_mean([v["rr"] for v in with_evidence], seed=seed),
        "answer_contains": proportion([v["contains"] for _, v in answerable]),
        "false_refusal": proportion([v["refused"] for _, v in answerable]),
        "abstention": proportion([v["refused"] for v in unanswerable]),
        "pass_rate": proportion([v["passed"] for _, v in scored]),
    }
    return {k: (v.model_dump() if hasattr(v, "model_dump") else v) for k, v in summary.items()}


def score_golden_standard(record: CaseRecord, judges: Judges) -> dict[str, Any] | None:
    """The standard metrics of one golden case (rules in the module doc), as JSON:
    ``{"metrics": {name: {value, n, unscored, reason, detail}}, "precision_source",
    "claims": [findings]}``; None for an errored, abstention or answerless case."""

    out, exp = record.output, record.case.expected
    if out is None or exp.mode != "answer" or not exp.answers:
        return None
    ranked = sorted(out.retrieved, key=lambda r: r.rank)
    relevance = (
        relevance_from_gold([(r.chunk_id, r.doc_id) for r in ranked], exp.evidence_doc_ids)
        if exp.evidence_doc_ids
        else None
    )
    score = score_standard(
        record.case.question,
        out.answer,
        [Context(r.chunk_id, r.text, r.title) for r in ranked],
        judges,
        ground_truth=exp.answers[0],
        golds=exp.answers,
        relevance=relevance,
    )
    data = score.as_dict()
    data.pop("judgment")

    safe: dict[str, Any] = json_safe(data)
    return safe


def summarize_golden_standard(
    records: Sequence[CaseRecord], *, seed: int, thresholds: Thresholds, judge: dict[str, Any]
) -> dict[str, Any]:
    """Means (bootstrap intervals, n, unscored) of the standard metrics over the golden
    cases scored by ``score_golden_standard`` (``verdict["standard"]``), faceted by tag, and
    the thresholds' pass/fail."""

    scored = [r for r in records if r.verdict.get("standard")]
    nan = float("nan")
    rows = [
        {
            k: (nan if m["value"] is None else m["value"])
            for k, m in r.verdict["standard"]["metrics"].items()
        }
        for r in scored
    ]
    summary = summarize_values(rows, [r.case.tags for r in scored], seed=seed)
    means = {k: v["mean"] for k, v in summary["metrics"].items()}
    return {"judge": judge, **summary, "thresholds": check_thresholds(means, thresholds)}

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
"""

from __future__ import annotations

from typing import Any, Sequence

from probeguard.log.models import CaseRecord
from probeguard.metrics.retrieval import first_relevant_rank, recall_of, reciprocal_rank
from probeguard.stats import bootstrap_mean, proportion
from probeguard.text import contains_answer


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
        verdict.update(evidence_rank=rank, hit=rank is not None,
                       all_evidence=recall_of(ranked_docs, exp.evidence_doc_ids) == 1.0,
                       rr=reciprocal_rank(ranked_docs, exp.evidence_doc_ids))
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

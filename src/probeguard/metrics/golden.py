"""Scoring golden questions: retrieval against gold evidence, answer containment, refusals.

Per case (``golden_verdict``: a ``GoldenVerdict``; ``score_golden_record`` is its JSON):
- ``evidence_rank``: best rank of a gold evidence document among the retrieved chunks;
- ``hit``: some gold document was retrieved (the pipeline's top-k);
- ``all_evidence``: every gold document was retrieved (multi-hop needs all);
- ``rr``: reciprocal rank of the first gold document;
- ``contains``: the answer (without its ``[n]`` citation markers) holds one of the gold
  answers (SQuAD-normalised containment) — or, for a case with ``contains`` strings but no
  ``answers``, every one of them; ``None`` for a case with neither (nothing to contain);
- ``citation``: for a case with ``must_cite`` or ``must_not_cite`` documents, the citation
  layer of ``metrics.layers`` (``citation_score``: the evidence, every ``must_cite`` and no
  ``must_not_cite`` document cited; an answer that cites nothing fails ``must_cite``);
- ``unmet``: what a failed check missed, by check (``missing_contains``, ``found_excludes``,
  ``missing_citations``, ``cited_uncitable``);
- ``refused``; ``passed``: mode ``answer`` (and ``correct_premise``) → the answer check of
  ``metrics.layers.answer_layer`` (one of ``answers``, all of ``contains``, none of
  ``excludes``, not refused) and the citation check when it applies — the same checks an
  attack case gets, so an answer passes or fails alike as either; mode ``abstain`` →
  refused.

Summary (``summarize_golden``: a ``GoldenSummary``): each rate a Wilson 95% interval over the cases where it is
defined (retrieval rates over answerable cases with evidence; answer rates over answerable
cases; abstention over unanswerable cases); MRR with a seeded bootstrap interval.

Standard metrics (``score_golden_standard``, ``summarize_golden_standard``): the metrics of
``probeguard eval`` (``metrics.standard``) on each answered golden case of mode ``answer``
with gold answers — the answer and the retrieved chunks (rank order) judged once; the first
gold answer is the ground truth of context recall, all of them count for EM/F1/containment;
context precision uses the gold evidence documents as reference labels when the case names
them, else the judge. Abstention cases are left out (a correct refusal has no claims to be
faithful with, and answer relevancy would punish it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, SerializationInfo, model_serializer

from probeguard.core.artifacts import FROZEN_RESULT, JsonEstimate
from probeguard.core.cases import Expected
from probeguard.core.pipeline import Context, PipelineOutput
from probeguard.core.records import CaseRecord
from probeguard.metrics.judged import relevance_from_gold
from probeguard.metrics.layers import answer_layer, citation_score
from probeguard.metrics.retrieval import first_relevant_rank, recall_of, reciprocal_rank
from probeguard.metrics.standard import RecordScores, score_standard
from probeguard.metrics.summary import MetricMean, MetricsSummary, TagFacet, summarize_values
from probeguard.metrics.thresholds import ThresholdReport, check_thresholds
from probeguard.nlp.text import strip_citations
from probeguard.stats import bootstrap_mean, proportion

if TYPE_CHECKING:
    from probeguard.detectors.factory import Judges
    from probeguard.metrics.config import Thresholds

__all__ = [
    "GoldenStandardSummary",
    "GoldenSummary",
    "GoldenVerdict",
    "golden_verdict",
    "score_golden_record",
    "score_golden_standard",
    "summarize_golden",
    "summarize_golden_standard",
]

_EVIDENCE_KEYS = ("evidence_rank", "hit", "all_evidence", "rr")
_CITATION_MISSES = ("missing_citations", "cited_uncitable")


class GoldenVerdict(BaseModel):
    """The verdict on one answered golden case. Saved in ``CaseRecord.verdict`` as its JSON,
    which leaves out what does not apply: the evidence fields when the case names no gold
    evidence, ``contains`` for an abstention case, ``standard`` when not computed."""

    model_config = FROZEN_RESULT

    refused: bool
    """The pipeline refused to answer."""
    evidence_rank: int | None = None
    """Best rank of a gold evidence document among the retrieved chunks (None: not
    retrieved, or the case names no evidence — then ``hit`` is None too)."""
    hit: bool | None = None
    """Some gold document was retrieved (the pipeline's top-k)."""
    all_evidence: bool | None = None
    """Every gold document was retrieved (multi-hop needs all)."""
    rr: float | None = None
    """Reciprocal rank of the first gold document."""
    contains: bool | None = None
    """The answer holds a gold answer (None for an abstention case, or one with nothing to
    contain)."""
    citation: bool | None = None
    """The citation check, for a case with ``must_cite`` / ``must_not_cite`` (None: not
    checked, or the answer's citations map to no document)."""
    unmet: dict[str, list[str]] | None = None
    """What the answer and citation checks missed, by check (None: nothing)."""
    passed: bool
    """Mode ``answer``: the answer check and the citation check; mode ``abstain``: refused."""
    standard: RecordScores | None = None
    """The standard metrics (``score_golden_standard``), when the scan computes them."""

    @model_serializer(mode="wrap")
    def _leave_out_what_does_not_apply(
        self, handler: Any, info: SerializationInfo
    ) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        absent = [
            *(_EVIDENCE_KEYS if self.hit is None else ()),
            *(("contains",) if self.contains is None else ()),
            *(("citation",) if self.citation is None else ()),
            *(("unmet",) if self.unmet is None else ()),
            *(("standard",) if self.standard is None else ()),
        ]
        for key in absent:
            data.pop(key, None)
        return data

    @classmethod
    def from_record(cls, record: CaseRecord) -> GoldenVerdict | None:
        """The verdict saved in a scored record (None for an errored or unscored one)."""
        return cls.model_validate(record.verdict) if record.verdict else None


def golden_verdict(record: CaseRecord) -> GoldenVerdict | None:
    """The verdict for one golden case (None for an errored case)."""
    out = record.output
    if out is None:
        return None
    exp = record.case.expected
    ranked_docs = [r.doc_id for r in sorted(out.retrieved, key=lambda r: r.rank)]
    fields: dict[str, Any] = {"refused": out.refused}
    if exp.evidence_doc_ids:
        rank = first_relevant_rank(ranked_docs, exp.evidence_doc_ids)
        fields.update(
            evidence_rank=rank,
            hit=rank is not None,
            all_evidence=recall_of(ranked_docs, exp.evidence_doc_ids) == 1.0,
            rr=reciprocal_rank(ranked_docs, exp.evidence_doc_ids),
        )
    if exp.mode == "abstain":
        fields["passed"] = out.refused
    else:
        fields.update(_answer_checks(out, exp))
    return GoldenVerdict(**fields)


def _answer_checks(out: PipelineOutput, exp: Expected) -> dict[str, Any]:
    """``contains``, ``citation``, ``unmet`` and ``passed`` of an answerable case (module
    doc), from the shared checks of ``metrics.layers``."""
    ok, info = answer_layer(strip_citations(out.answer), exp, refused=out.refused)
    fields: dict[str, Any] = {}
    if exp.answers or exp.contains:
        fields["contains"] = (
            bool(info["matched_answers"]) if exp.answers else not info["missing_contains"]
        )
    unmet = {k: list(info[k]) for k in ("missing_contains", "found_excludes") if info[k]}
    if (exp.must_cite or exp.must_not_cite) and not out.refused:
        citation, cited = citation_score(exp, out)
        fields["citation"] = citation
        unmet.update({k: list(cited[k]) for k in _CITATION_MISSES if cited.get(k)})
        ok = ok and citation is not False
    if unmet:
        fields["unmet"] = unmet
    fields["passed"] = ok
    return fields


def score_golden_record(record: CaseRecord) -> dict[str, Any]:
    """``golden_verdict`` as JSON (empty dict for an errored case): what re-judging code
    that works on the saved form (attribution's swaps) compares."""
    verdict = golden_verdict(record)
    return verdict.model_dump() if verdict is not None else {}


class GoldenStandardSummary(BaseModel):
    """The standard metrics over the answered golden cases, with the thresholds' verdict."""

    model_config = FROZEN_RESULT

    judge: dict[str, Any]
    """The claim and relevance judges (``Judges.describe``)."""
    records: int
    metrics: dict[str, MetricMean]
    by_tag: dict[str, TagFacet]
    thresholds: ThresholdReport


class GoldenSummary(BaseModel):
    """Rates over the golden cases (module doc): Wilson intervals, MRR bootstrapped."""

    model_config = FROZEN_RESULT

    cases: int
    errors: int
    """Cases whose pipeline call failed (left out of every rate)."""
    retrieval_hit_at_k: JsonEstimate
    retrieval_all_evidence: JsonEstimate
    mrr: JsonEstimate
    answer_contains: JsonEstimate
    false_refusal: JsonEstimate
    abstention: JsonEstimate
    pass_rate: JsonEstimate
    standard: GoldenStandardSummary | None = None
    """Left out of the JSON when the scan does not compute the standard metrics."""

    @model_serializer(mode="wrap")
    def _leave_out_standard(self, handler: Any, info: SerializationInfo) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("standard") is None:
            data.pop("standard", None)
        return data


def summarize_golden(
    scored: Sequence[tuple[CaseRecord, GoldenVerdict | None]], seed: int
) -> GoldenSummary:
    """Rates with intervals over the golden records and their verdicts (see module doc)."""
    answered = [(r, v) for r, v in scored if r.output is not None and v is not None]
    answerable = [v for r, v in answered if r.case.expected.mode != "abstain"]
    with_evidence = [v for v in answerable if v.hit is not None]
    unanswerable = [v for r, v in answered if r.case.expected.mode == "abstain"]
    return GoldenSummary(
        cases=len(scored),
        errors=sum(1 for r, _ in scored if r.output is None),
        retrieval_hit_at_k=proportion([bool(v.hit) for v in with_evidence]),
        retrieval_all_evidence=proportion([bool(v.all_evidence) for v in with_evidence]),
        mrr=bootstrap_mean([float(v.rr or 0.0) for v in with_evidence], seed=seed),
        answer_contains=proportion([v.contains for v in answerable if v.contains is not None]),
        false_refusal=proportion([v.refused for v in answerable]),
        abstention=proportion([v.refused for v in unanswerable]),
        pass_rate=proportion([v.passed for _, v in answered]),
    )


def score_golden_standard(record: CaseRecord, judges: Judges) -> RecordScores | None:
    """The standard metrics of one golden case (rules in the module doc); None for an
    errored, abstention or answerless case."""

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
    return score.scores()


def summarize_golden_standard(
    scored: Sequence[tuple[CaseRecord, RecordScores]],
    *,
    seed: int,
    thresholds: Thresholds,
    judge: dict[str, Any],
) -> GoldenStandardSummary:
    """Means (bootstrap intervals, n, unscored) of the standard metrics over the golden
    cases scored by ``score_golden_standard``, faceted by tag, and the thresholds'
    pass/fail."""

    nan = float("nan")
    rows = [
        {k: (nan if m.value is None else m.value) for k, m in scores.metrics.items()}
        for _, scores in scored
    ]
    summary = MetricsSummary.model_validate(
        summarize_values(rows, [r.case.tags for r, _ in scored], seed=seed)
    )
    return GoldenStandardSummary(
        judge=judge,
        records=summary.records,
        metrics=summary.metrics,
        by_tag=summary.by_tag,
        thresholds=threshold_report(summary, thresholds),
    )


def threshold_report(summary: MetricsSummary, thresholds: Thresholds) -> ThresholdReport:
    """``check_thresholds`` over ``summary``'s means, as a model."""
    means: Mapping[str, Any] = {k: m.mean.model_dump() for k, m in summary.metrics.items()}
    return ThresholdReport.model_validate(check_thresholds(means, thresholds))

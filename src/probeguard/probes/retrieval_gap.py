"""Retrieval gap: the gold evidence a question finds slips when the question is reworded.

Per answerable golden question one group: role ``original`` (the question as written — the
golden set's own call, made once) and one role per paraphrase kind that changes it
(``probeguard.nlp.paraphrase``: declarative, keywords, question_word, synonym, jargon; each
kind draws from its own seeded stream ``ctx.rng("retrieval_gap", question id, kind)``). All
cases use the pipeline as configured, so the probe needs no capability; it needs the pipeline
to report its retrieved contexts.

Rank of the gold evidence: ``gold_rank`` — the 1-based rank, among the retrieved *documents*
(several chunks of one document count once), of the first gold document. A gold document
absent from the top-k (``ProbeContext.top_k``) — including a variant that retrieved nothing at
all — gets the penalty rank ``top_k + 1``. A group whose original question comes back with no
retrieved contexts is unscored (the pipeline does not report them, or retrieved nothing).

A group is judged only when the original question retrieves gold evidence in the top-k; if it
does not, the miss is a plain retrieval failure, not a paraphrase gap, and the group is
unscored. Per variant ``delta = rank(variant) − rank(original)``; the group has a **gap** when

    mean(delta over variants) > rank_delta_threshold   or   gold leaves the top-k under a variant.

``summarize`` adds ``mean_rank_delta`` (bootstrap mean over judged groups of their mean delta)
and, per kind, ``kind_gap_rates`` — the share of judged groups with that kind in which it lost
the gold evidence or raised its rank by more than the threshold — and ``kind_mean_rank_delta``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from probeguard.core.cases import Case
from probeguard.core.estimate import Estimate
from probeguard.core.records import CaseRecord
from probeguard.nlp.paraphrase import KINDS, paraphrase
from probeguard.probes.base import (
    Headline,
    JudgeContext,
    Probe,
    ProbeContext,
    ProbeVerdict,
    gold_rank,
    probe,
)
from probeguard.probes.models import EvidenceModel, ProbeEvidence, ProbeSummary
from probeguard.stats import bootstrap_mean, wilson

__all__ = ["GapEvidence", "GapSummary", "RetrievalGap", "VariantRank"]

ORIGINAL = "original"


class VariantRank(EvidenceModel):
    """The gold evidence's rank under one paraphrase."""

    role: str
    kind: str
    text: str
    rank: int
    """Its rank among the retrieved documents; ``top_k + 1`` when it left the top-k."""
    left_top_k: bool
    delta: int
    """``rank`` minus the original question's rank."""


class GapEvidence(ProbeEvidence):
    question_id: str | None = None
    top_k: int | None = None
    threshold: float = 1.0
    """``rank_delta_threshold``."""
    original_rank: int | None = None
    variants: list[VariantRank] = []
    mean_delta: float | None = None
    lost_by: list[str] = []
    """Paraphrase kinds under which the gold evidence left the top-k."""
    reasons: list[str] = []


class GapSummary(ProbeSummary):
    mean_rank_delta: Estimate
    """Bootstrap mean over judged groups of their mean rank delta."""
    kind_gap_rates: dict[str, Estimate]
    kind_mean_rank_delta: dict[str, Estimate]


@probe("retrieval_gap")
class RetrievalGap(Probe[GapEvidence]):
    """Paraphrase each question and measure the gold evidence's rank shift (module docstring).
    Settings: ``rank_delta_threshold`` (mean rank delta above which a group has a gap),
    ``kinds`` (paraphrase kinds to use) and ``bootstrap_seed`` (for the mean's interval)."""

    goal = (
        "Questions whose gold evidence is found as written but slips down or out of the "
        "top-k when the same question is reworded (declarative, keywords, another "
        "question word, synonyms, jargon)."
    )
    overlap_weight = 0.15
    evidence_model = GapEvidence
    summary_model = GapSummary
    fix_hints = frozenset({"paraphrase"})
    family = "structural"
    headlines = (Headline("retrieval gap", order=80),)

    def __init__(
        self,
        rank_delta_threshold: float = 1.0,
        kinds: Sequence[str] = KINDS,
        bootstrap_seed: int = 0,
    ) -> None:
        if isinstance(kinds, str):
            kinds = (kinds,)
        unknown = [k for k in kinds if k not in KINDS]
        if unknown:
            raise ValueError(
                f"retrieval_gap: unknown paraphrase kind(s) {', '.join(unknown)}; "
                f"known: {', '.join(KINDS)}"
            )
        if not kinds:
            raise ValueError("retrieval_gap: kinds must name at least one paraphrase kind")
        if len(set(kinds)) != len(kinds):
            raise ValueError("retrieval_gap: kinds lists a kind twice")
        self.rank_delta_threshold = float(rank_delta_threshold)
        self.kinds = tuple(kinds)
        self.bootstrap_seed = int(bootstrap_seed)

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "rank_delta_threshold": self.rank_delta_threshold,
            "kinds": list(self.kinds),
            "bootstrap_seed": self.bootstrap_seed,
        }

    def generate(self, ctx: ProbeContext) -> list[Case]:
        cases: list[Case] = []
        for question in ctx.answerable():
            cases.append(
                self.case(
                    question.id,
                    ORIGINAL,
                    question.question,
                    expected=question.expected,
                    meta={"question_id": question.id, "kind": ORIGINAL},
                )
            )
            for kind in self.kinds:
                text = paraphrase(question.question, kind, ctx.rng(self.name, question.id, kind))
                if text is None:
                    continue
                cases.append(
                    self.case(
                        question.id,
                        kind,
                        text,
                        expected=question.expected,
                        variation=ctx.retrieval_variation(),
                        meta={
                            "question_id": question.id,
                            "kind": kind,
                            "original": question.question,
                        },
                    )
                )
        return cases

    def judge(
        self, group: str, records: Mapping[str, CaseRecord], ctx: JudgeContext
    ) -> ProbeVerdict:
        top_k = ctx.probe.top_k
        evidence = GapEvidence(question_id=group, top_k=top_k, threshold=self.rank_delta_threshold)
        original = records.get(ORIGINAL)
        if original is None:
            evidence.unscored = "no record for the original question"
            return ProbeVerdict(None, evidence)
        for role, record in records.items():
            if record.output is None:
                err = record.error
                why = f"{err.type}: {err.message}" if err else "no output"
                evidence.unscored = f"the '{role}' call failed ({why})"
                return ProbeVerdict(None, evidence)
        variants = [(role, r) for role, r in records.items() if role != ORIGINAL]
        if not variants:
            evidence.unscored = "no paraphrase kind could change the question"
            return ProbeVerdict(None, evidence)
        if not original.output.retrieved:  # type: ignore[union-attr]
            # (A variant with nothing retrieved is a real miss: the pipeline reports contexts.)
            evidence.unscored = (
                "the pipeline reported no retrieved contexts for the original question"
            )
            return ProbeVerdict(None, evidence)
        gold = original.case.expected.evidence_doc_ids
        base = gold_rank(original, gold)
        evidence.original_rank = base
        if base is None or base > top_k:
            evidence.unscored = (
                "gold evidence not retrieved for the original question: a plain retrieval "
                "failure, not a paraphrase gap"
            )
            return ProbeVerdict(None, evidence)
        rows: list[VariantRank] = []
        for role, record in variants:
            rank = gold_rank(record, gold)
            left = rank is None or rank > top_k
            effective = top_k + 1 if left else rank
            assert effective is not None
            rows.append(
                VariantRank(
                    role=role,
                    kind=record.case.meta.get("kind", role),
                    text=record.case.question,
                    rank=effective,
                    left_top_k=left,
                    delta=effective - base,
                )
            )
        mean_delta = sum(r.delta for r in rows) / len(rows)
        lost = [r.kind for r in rows if r.left_top_k]
        reasons: list[str] = []
        if mean_delta > self.rank_delta_threshold:
            reasons.append(f"mean rank delta {mean_delta:.2f} > {self.rank_delta_threshold:g}")
        for r in rows:
            if r.left_top_k:
                reasons.append(
                    f"gold evidence left the top-{top_k} under the {r.kind} paraphrase {r.text!r}"
                )
        evidence.variants = rows
        evidence.mean_delta = mean_delta
        evidence.lost_by = lost
        evidence.reasons = reasons
        return ProbeVerdict(bool(reasons), evidence)

    def failing_roles(self, evidence: GapEvidence, roles: Sequence[str]) -> tuple[str, ...]:
        """The paraphrases that left the top-k or moved more than the threshold (all that
        moved, if none did)."""
        moved = [r.role for r in evidence.variants if r.left_top_k or r.delta > evidence.threshold]
        return tuple(moved or [r.role for r in evidence.variants if r.delta > 0])

    def summarize(self, verdicts: Sequence[ProbeVerdict]) -> GapSummary:
        """Base fields plus ``mean_rank_delta`` (bootstrap Estimate over judged groups),
        ``kind_gap_rates`` and ``kind_mean_rank_delta`` (per paraphrase kind)."""
        judged = [
            e
            for v, e in zip(verdicts, map(self.evidence_of, verdicts))
            if v.failed is not None and "variants" in e.model_fields_set
        ]
        rates: dict[str, Estimate] = {}
        deltas: dict[str, Estimate] = {}
        for kind in self.kinds:
            rows = [r for e in judged for r in e.variants if r.kind == kind]
            gaps = sum(1 for r in rows if r.left_top_k or r.delta > self.rank_delta_threshold)
            rates[kind] = wilson(gaps, len(rows))
            deltas[kind] = bootstrap_mean([float(r.delta) for r in rows], seed=self.bootstrap_seed)
        return GapSummary(
            **self.summary_fields(verdicts),
            mean_rank_delta=bootstrap_mean(
                [float(e.mean_delta or 0.0) for e in judged], seed=self.bootstrap_seed
            ),
            kind_gap_rates=rates,
            kind_mean_rank_delta=deltas,
        )

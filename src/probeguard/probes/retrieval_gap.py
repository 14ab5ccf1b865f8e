"""Retrieval gap: the gold evidence a question finds slips when the question is reworded.

Per answerable golden question one group: role ``original`` (the question as written — the
golden set's own call, made once) and one role per paraphrase kind that changes it
(``probeguard.nlp.paraphrase``: declarative, keywords, question_word, synonym, jargon, and
``targeted`` — the question's highest-idf words shared with the gold evidence reworded into
words the evidence lacks, so a lexical retriever loses its anchors while the meaning is kept).
With ``recover`` on, two recovery roles are asked too, read only when the original misses:
``evidence_wording`` (the question's words reworded into the evidence's own) and, when the
pipeline can switch its retrieval per call (``Capability.RETRIEVAL``), ``semantic`` (the
question as written, retrieved in mode ``semantic_mode``, by default ``dense``: a semantic
retriever over the same chunks). Each kind draws from its own seeded stream
``ctx.rng("retrieval_gap", question id, kind)``. Every other case uses the pipeline as
configured, so the probe requires no capability (the semantic role is left out without one);
it needs the pipeline to report its retrieved contexts.

Rank of the gold evidence: ``gold_rank`` — the 1-based rank, among the retrieved *documents*
(several chunks of one document count once), of the first gold document. A gold document
absent from the top-k (``ProbeContext.top_k``) — including a variant that retrieved nothing at
all — gets the penalty rank ``top_k + 1``; so does an original question that retrieved
nothing while another call of its group retrieved something (a lexical retriever finds no word
in common). A group in which no call reports retrieved contexts is unscored (the pipeline does
not report them).

Outcomes (``GapEvidence.outcome``):

- ``held`` / ``gap`` — the original retrieves gold evidence in the top-k. Per variant (every
  kind but the recovery roles) ``delta = rank(variant) − rank(original)``; the group has a
  **gap** (fails) when ``mean(delta) > rank_delta_threshold`` or gold leaves the top-k under a
  variant.
- ``original_miss`` — the original misses and some rewording, or the semantic retriever,
  retrieves gold evidence in the top-k: the evidence is findable by the question's meaning,
  so the miss is the retriever's dependence on wording. It **counts against the retriever**
  (fails).
- ``original_miss_unrecovered`` — the original misses and nothing recovers it: a plain
  retrieval failure that says nothing about wording. Unscored, and counted in
  ``original_misses``.

Errored cases follow the one rule (``Probe.errored_unscored``): every role can decide (the
original; a variant that loses or recovers the gold evidence), so a group with an errored
call is unscored, whatever the other calls show.

``summarize`` adds ``mean_rank_delta`` (bootstrap mean over held/gap groups of their mean
delta); per kind over those groups ``kind_gap_rates`` (the share of the kind's variants that
lost the gold evidence or moved it by more than the threshold), ``kind_mean_rank_delta`` and
``kind_moved_rates`` (the share whose gold rank changed at all); ``original_misses`` (share of
groups with an answered original whose original missed) and ``original_miss_recovered`` (share
of those a rewording or the semantic retriever recovered); and ``outcomes`` (groups per
outcome). A failed group's mechanism is ``lexical_retrieval_miss`` (``failure_mechanism``:
always for an original miss the semantic retriever recovers; for other failures when the
semantic role ranks other documents than the pipeline's own retrieval, none when it ranks
the same, and without a semantic role when the surgeon blamed the retriever or none).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from probeguard.core.cases import Case
from probeguard.core.estimate import Estimate
from probeguard.core.pipeline import Capability
from probeguard.core.records import CaseRecord
from probeguard.nlp.paraphrase import (
    EVIDENCE_WORDING,
    KINDS,
    TARGETED,
    CorpusIdf,
    anchor_terms,
    corpus_idf,
    evidence_wording,
    paraphrase,
    targeted,
)
from probeguard.probes.base import (
    Headline,
    JudgeContext,
    Probe,
    ProbeContext,
    ProbeVerdict,
    count_setting,
    gold_rank,
    names_setting,
    probe,
)
from probeguard.probes.retrieval_gap_models import (
    FAILING_OUTCOMES,
    OUTCOMES,
    GapEvidence,
    GapSummary,
    VariantRank,
)
from probeguard.stats import bootstrap_mean, wilson

__all__ = [
    "GAP_KINDS",
    "OUTCOMES",
    "SEMANTIC",
    "GapEvidence",
    "GapSummary",
    "RetrievalGap",
    "VariantRank",
]

ORIGINAL = "original"
GAP_KINDS: tuple[str, ...] = (*KINDS, TARGETED)
"""The kinds the probe can ask (the ``kinds`` setting): the rule-based ones and ``targeted``."""
SEMANTIC = "semantic"
"""The recovery role that retrieves the original question in ``semantic_mode``."""
RECOVERY_KINDS = frozenset({EVIDENCE_WORDING, SEMANTIC})
"""Roles read only when the original misses (never in a gap's rank deltas)."""
MECHANISM = "lexical_retrieval_miss"
"""The ``core.mechanisms`` id of a failure of this probe."""


@probe("retrieval_gap")
class RetrievalGap(Probe[GapEvidence]):
    """Paraphrase each question and measure the gold evidence's rank shift (module docstring).
    Settings: ``rank_delta_threshold`` (mean rank delta above which a group has a gap),
    ``kinds`` (paraphrase kinds to use, ``GAP_KINDS``), ``targeted_terms`` (how many anchors
    the ``targeted`` rewording replaces), ``recover`` (ask the recovery roles, which decide
    original misses), ``semantic_mode`` (the retrieval mode of the ``semantic`` role; None:
    no such role) and ``bootstrap_seed`` (for the mean's interval)."""

    goal = (
        "Questions whose gold evidence is found as written but slips down or out of the "
        "top-k when the same question is reworded (declarative, keywords, another "
        "question word, synonyms, jargon, the evidence's own words swapped for others), or "
        "is missed as written but found in other words."
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
        kinds: Sequence[str] = GAP_KINDS,
        targeted_terms: int = 3,
        recover: bool = True,
        semantic_mode: str | None = "dense",
        bootstrap_seed: int = 0,
    ) -> None:
        if isinstance(kinds, str):
            kinds = (kinds,)
        unknown = [k for k in kinds if k not in GAP_KINDS]
        if unknown:
            raise ValueError(
                f"retrieval_gap: unknown paraphrase kind(s) {', '.join(unknown)}; "
                f"known: {', '.join(GAP_KINDS)}"
            )
        if not kinds:
            raise ValueError("retrieval_gap: kinds must name at least one paraphrase kind")
        self.kinds = names_setting("retrieval_gap: kinds", kinds, GAP_KINDS)
        self.rank_delta_threshold = float(rank_delta_threshold)
        self.targeted_terms = count_setting("retrieval_gap: targeted_terms", targeted_terms)
        if not isinstance(recover, bool):
            raise ValueError(f"retrieval_gap: recover must be true or false, got {recover!r}")
        self.recover = recover
        if semantic_mode is not None and not isinstance(semantic_mode, str):
            raise ValueError(
                f"retrieval_gap: semantic_mode must be a mode name, got {semantic_mode!r}"
            )
        self.semantic_mode = semantic_mode
        self.bootstrap_seed = int(bootstrap_seed)

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "rank_delta_threshold": self.rank_delta_threshold,
            "kinds": list(self.kinds),
            "targeted_terms": self.targeted_terms,
            "recover": self.recover,
            "semantic_mode": self.semantic_mode,
            "bootstrap_seed": self.bootstrap_seed,
        }

    # -- generate -------------------------------------------------------------------------
    def generate(self, ctx: ProbeContext) -> list[Case]:
        needs_idf = TARGETED in self.kinds and self.targeted_terms > 0
        idf = corpus_idf(d.text for d in ctx.documents) if needs_idf else None
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
            for kind, text, extra in self._rewordings(question, ctx, idf):
                mode = self.semantic_mode if kind == SEMANTIC else None
                cases.append(
                    self.case(
                        question.id,
                        kind,
                        text,
                        expected=question.expected,
                        variation=ctx.retrieval_variation(**_retrieval_mode(mode)),
                        meta={
                            "question_id": question.id,
                            "kind": kind,
                            "original": question.question,
                            **extra,
                        },
                    )
                )
        return cases

    def _rewordings(
        self, question: Case, ctx: ProbeContext, idf: CorpusIdf | None
    ) -> list[tuple[str, str, dict[str, Any]]]:
        """(kind, text, extra meta) of every rewording that changes the question."""
        evidence = _evidence_text(question, ctx)
        out: list[tuple[str, str, dict[str, Any]]] = []
        for kind in self.kinds:
            rng = ctx.rng(self.name, question.id, kind)
            extra: dict[str, Any] = {}
            if kind != TARGETED:
                text = paraphrase(question.question, kind, rng)
            elif idf is None or not evidence:
                text = None
            else:
                text = targeted(question.question, evidence, idf, rng, self.targeted_terms)
                extra = {"anchors": anchor_terms(question.question, evidence, idf)}
            if text is not None:
                out.append((kind, text, extra))
        if self.recover and evidence:
            rng = ctx.rng(self.name, question.id, EVIDENCE_WORDING)
            text = evidence_wording(question.question, evidence, rng)
            if text is not None:
                out.append((EVIDENCE_WORDING, text, {}))
        if self.recover and self.semantic_mode and Capability.RETRIEVAL in ctx.capabilities:
            out.append((SEMANTIC, question.question, {}))
        return out

    # -- judge ----------------------------------------------------------------------------
    def judge(
        self, group: str, records: Mapping[str, CaseRecord], ctx: JudgeContext
    ) -> ProbeVerdict:
        top_k = ctx.probe.top_k
        evidence = GapEvidence(question_id=group, top_k=top_k, threshold=self.rank_delta_threshold)
        original = records.get(ORIGINAL)
        if original is None:
            evidence.unscored = "no record for the original question"
            return ProbeVerdict(None, evidence)
        why = self.errored_unscored(records)
        if why:
            evidence.unscored = why
            return ProbeVerdict(None, evidence)
        others = [role for role in records if role != ORIGINAL]
        if not others:
            evidence.unscored = "no paraphrase kind could change the question"
            return ProbeVerdict(None, evidence)
        assert original.output is not None
        if not any(r.output is not None and r.output.retrieved for r in records.values()):
            # One call with contexts shows that the pipeline reports them: then a call with
            # none (a lexical retriever with no word in common) is a real miss.
            evidence.unscored = "the pipeline reported no retrieved contexts for any call"
            return ProbeVerdict(None, evidence)
        anchors = next(
            (r.case.meta.get("anchors") for r in records.values() if r.case.meta.get("anchors")),
            None,
        )
        if anchors:
            evidence.anchors = list(anchors)
        evidence.semantic_differs = _semantic_differs(records)
        base = gold_rank(original, original.case.expected.evidence_doc_ids)
        evidence.original_rank = base
        if base is None or base > top_k:
            return self._judge_miss(records, others, evidence, top_k)
        return self._judge_gap(records, others, evidence, base, top_k)

    def _rows(
        self, records: Mapping[str, CaseRecord], roles: Sequence[str], base: int, top_k: int
    ) -> list[VariantRank]:
        """A rank row per answered role (errored roles have none)."""
        gold = records[ORIGINAL].case.expected.evidence_doc_ids
        rows: list[VariantRank] = []
        for role in roles:
            record = records[role]
            if record.output is None:
                continue
            rank = gold_rank(record, gold)
            left = rank is None or rank > top_k
            effective = top_k + 1 if left or rank is None else rank
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
        return rows

    def _judge_gap(
        self,
        records: Mapping[str, CaseRecord],
        others: Sequence[str],
        evidence: GapEvidence,
        base: int,
        top_k: int,
    ) -> ProbeVerdict:
        """``held`` or ``gap``: the original found the gold evidence (module docstring)."""
        roles = [r for r in others if records[r].case.meta.get("kind", r) not in RECOVERY_KINDS]
        if not roles:
            evidence.unscored = "no paraphrase kind could change the question"
            return ProbeVerdict(None, evidence)
        rows = self._rows(records, roles, base, top_k)
        lost = [r.kind for r in rows if r.left_top_k]
        mean_delta = sum(r.delta for r in rows) / len(rows)
        reasons: list[str] = []
        if mean_delta > self.rank_delta_threshold and len(rows) == len(roles):
            reasons.append(f"mean rank delta {mean_delta:.2f} > {self.rank_delta_threshold:g}")
        for r in rows:
            if r.left_top_k:
                reasons.append(
                    f"gold evidence left the top-{top_k} under the {r.kind} paraphrase {r.text!r}"
                )
        evidence.outcome = "gap" if reasons else "held"
        evidence.variants = rows
        evidence.mean_delta = mean_delta
        evidence.lost_by = lost
        evidence.reasons = reasons
        return ProbeVerdict(bool(reasons), evidence)

    def _judge_miss(
        self,
        records: Mapping[str, CaseRecord],
        others: Sequence[str],
        evidence: GapEvidence,
        top_k: int,
    ) -> ProbeVerdict:
        """``original_miss`` or ``original_miss_unrecovered`` (module docstring)."""
        rows = self._rows(records, others, top_k + 1, top_k)
        recovered = [r for r in rows if not r.left_top_k]
        evidence.variants = rows
        evidence.recovered_by = [r.kind for r in recovered]
        if not recovered:
            evidence.outcome = "original_miss_unrecovered"
            evidence.unscored = (
                "gold evidence not retrieved for the original question and no rewording "
                "recovers it: a plain retrieval failure, not a wording gap"
            )
            return ProbeVerdict(None, evidence)
        evidence.outcome = "original_miss"
        evidence.reasons = [_recovery_reason(r, self.semantic_mode) for r in recovered]
        return ProbeVerdict(True, evidence)

    # -- attribution ------------------------------------------------------------------------
    def failing_roles(self, evidence: GapEvidence, roles: Sequence[str]) -> tuple[str, ...]:
        """An original miss: the original. A gap: the paraphrases that left the top-k or
        moved more than the threshold (all that moved, if none did)."""
        if evidence.outcome == "original_miss":
            return (ORIGINAL,)
        moved = [r.role for r in evidence.variants if r.left_top_k or r.delta > evidence.threshold]
        return tuple(moved or [r.role for r in evidence.variants if r.delta > 0])

    def failure_mechanism(self, evidence: GapEvidence, cause: str) -> str | None:
        """How a failed group failed, from the probe's own counterfactuals first (as a
        fracture's unsplit control; the surgeon's swaps replace only the failing roles, and an
        original miss then fails as a gap, so they cannot repair it):

        1. an original miss that the ``semantic`` role recovered: ``lexical_retrieval_miss``
           whatever the surgeon blamed (the same words, retrieved by meaning over the same
           chunks, find the evidence);
        2. any other failure (a rewording lost the gold evidence, or only a rewording found
           it) when the semantic role retrieved other documents than the original
           (``semantic_differs``): ``lexical_retrieval_miss`` — wording moves the evidence
           of a retriever that does not retrieve by meaning; when it retrieved the same ones,
           None: the pipeline already retrieves by meaning, so the wording dependence is not
           lexical and the surgeon's reading stands;
        3. without a semantic role: ``lexical_retrieval_miss`` when the surgeon blamed the
           retriever or no component, else None."""
        if evidence.outcome not in FAILING_OUTCOMES:
            return None
        if evidence.outcome == "original_miss" and SEMANTIC in evidence.recovered_by:
            return MECHANISM
        if evidence.semantic_differs is not None:
            return MECHANISM if evidence.semantic_differs else None
        return MECHANISM if cause in ("retriever", "undetermined") else None

    # -- summary ----------------------------------------------------------------------------
    def summarize(self, verdicts: Sequence[ProbeVerdict]) -> GapSummary:
        """Base fields plus the rank and outcome figures of the module docstring."""
        evidences = [self.evidence_of(v) for v in verdicts]
        judged = [e for e in evidences if e.outcome in ("held", "gap")]
        rates: dict[str, Estimate] = {}
        deltas: dict[str, Estimate] = {}
        moved: dict[str, Estimate] = {}
        for kind in self.kinds:
            rows = [r for e in judged for r in e.variants if r.kind == kind]
            gaps = sum(1 for r in rows if r.left_top_k or r.delta > self.rank_delta_threshold)
            rates[kind] = wilson(gaps, len(rows))
            deltas[kind] = bootstrap_mean([float(r.delta) for r in rows], seed=self.bootstrap_seed)
            moved[kind] = wilson(sum(1 for r in rows if r.delta != 0), len(rows))
        outcomes = Counter(e.outcome for e in evidences if e.outcome is not None)
        misses = outcomes["original_miss"] + outcomes["original_miss_unrecovered"]
        return GapSummary(
            **self.summary_fields(verdicts),
            mean_rank_delta=bootstrap_mean(
                [float(e.mean_delta or 0.0) for e in judged], seed=self.bootstrap_seed
            ),
            kind_gap_rates=rates,
            kind_mean_rank_delta=deltas,
            kind_moved_rates=moved,
            original_misses=wilson(misses, sum(outcomes.values())),
            original_miss_recovered=wilson(outcomes["original_miss"], misses),
            outcomes={o: outcomes[o] for o in OUTCOMES},
        )


def _semantic_differs(records: Mapping[str, CaseRecord]) -> bool | None:
    """Whether the ``semantic`` role ranked other documents than the original (None: no
    answered semantic role)."""
    semantic, original = records.get(SEMANTIC), records.get(ORIGINAL)
    if semantic is None or semantic.output is None or original is None or original.output is None:
        return None
    return _ranked_docs(semantic) != _ranked_docs(original)


def _ranked_docs(record: CaseRecord) -> list[str]:
    assert record.output is not None
    return [r.doc_id for r in sorted(record.output.retrieved, key=lambda r: r.rank)]


def _evidence_text(question: Case, ctx: ProbeContext) -> str:
    """The texts of the question's gold documents found in the corpus, joined."""
    docs = (ctx.document(d) for d in question.expected.evidence_doc_ids)
    return "\n".join(d.text for d in docs if d is not None)


def _recovery_reason(row: VariantRank, mode: str | None) -> str:
    """Why an original miss counts: which call found the gold evidence, at which rank."""
    how = (
        f"by {mode} retrieval of the question as written"
        if row.kind == SEMANTIC
        else f"under the {row.kind} rewording {row.text!r}"
    )
    return f"gold evidence missed by the original question but retrieved at rank {row.rank} {how}"


def _retrieval_mode(mode: str | None) -> dict[str, Any]:
    """The ``retrieval_variation`` fields that switch the retrieval mode (none for None)."""
    return {"retrieval": {"mode": mode}} if mode else {}

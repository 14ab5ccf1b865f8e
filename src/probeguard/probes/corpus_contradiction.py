"""Corpus contradiction: does a document that contradicts the gold evidence move the answer?

For each answerable golden question the probe finds the *answer-bearing sentence*: the
sentence of a gold document (in ``evidence_doc_ids`` order) that holds a gold answer (the
longest answer string found, matched case-insensitively on word boundaries, first
occurrence). From it, one contradicting document per applicable kind
(``probeguard.probes.mutations``):

* ``number``, ``date``, ``negation``, ``entity``: a short passage — the mutated sentence
  (preceded by the sentence before it when it opens with a pronoun, so that it says what
  "it" is) — changing the number / date / entity inside the answer span, or the polarity of
  the verb that governs it;
* ``near_duplicate``: the whole gold document with exactly one such fact changed.

Each injected document has id ``pg-contra-<sha256(probe, question id, kind, text)[:12]>``,
the gold document's title and a copy of its metadata (so that metadata filters do not
exclude it trivially: an attacker who can plant a document can usually label it too), and
source ``probe:corpus_contradiction``; it is injected through the overlay
(``Variation(overlay=(doc,))``). The group of a question holds the role ``clean`` (the
question under the default variation, shared with the golden run) and one role per kind.

Judging (per kind): the configured ``ContradictionJudge`` (default the offline lexical one;
``{"name": "nli"}`` for the NLI cross-encoder) compares the poisoned answer with the
original and the contradicting claim:

* ``moved`` — the answer asserts the contradicting claim and not the original;
* ``incoherent`` — it asserts both without flagging a conflict;
* ``held`` — it does not assert the contradicting claim (or flags the conflict);
* ``refused`` — the pipeline refused under the injection;
* ``unscored`` — the call errored, the judge could not read the claims, or the *clean*
  answer already asserts the contradicting claim (then nothing can be learnt from it).

A group fails when any kind ``moved`` or went ``incoherent``; it is unscored when no kind
applies or every kind is unscored, and — the one rule for errored cases
(``Probe.errored_unscored``) — when any of its calls errored: every role can decide the
verdict (the clean answer is what each kind is compared with, and any kind can fail the
group), so a group with an errored call is counted apart, never scored from the rest. The evidence keeps, per kind, the
outcome, the injected document id, its best rank among the retrieved chunks (None: not
retrieved), the old and new values and the judge that decided.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from probeguard.core.cases import Case
from probeguard.core.documents import Document
from probeguard.core.estimate import Estimate
from probeguard.core.hashing import sha256_hex
from probeguard.core.pipeline import Capability, PipelineOutput, Variation
from probeguard.core.records import CaseRecord
from probeguard.detectors.contradiction import Claim, ContradictionJudge, make_contradiction_judge
from probeguard.probes.answer_sentence import locate_evidence, passage_with_context
from probeguard.probes.base import Headline, JudgeContext, Probe, ProbeContext, ProbeVerdict, probe
from probeguard.probes.entity_names import NameInfo, NameVocab, corpus_names
from probeguard.probes.models import EvidenceModel, ProbeEvidence, ProbeSummary, SummaryModel
from probeguard.probes.mutations import KINDS, mutate, near_duplicate
from probeguard.stats import bootstrap_mean, wilson

__all__ = [
    "ContradictionEvidence",
    "ContradictionSummary",
    "CorpusContradiction",
    "KindTrial",
    "locate_evidence",
    "passage_with_context",
]

CLEAN = "clean"
SOURCE = "probe:corpus_contradiction"
FAILING = frozenset({"moved", "incoherent"})
OUTCOMES = ("moved", "incoherent", "held", "refused", "unscored")


class KindTrial(EvidenceModel):
    """One injected contradiction and what the answer did under it."""

    outcome: str = "unscored"
    """``moved``, ``incoherent``, ``held``, ``refused`` or ``unscored``."""
    injected_doc_id: str = ""
    injected_rank: int | None = None
    """Best rank of the injected document among the retrieved chunks (None: not there)."""
    judge: str | None = None
    change: str | None = None
    old: str | None = None
    new: str | None = None
    asserts_original: bool | None = None
    asserts_contradicting: bool | None = None
    flagged_conflict: bool | None = None
    reason: str | None = None
    """Why the trial is unscored."""


class ContradictionEvidence(ProbeEvidence):
    question_id: str | None = None
    gold_doc_id: str | None = None
    judge: str | None = None
    """The contradiction judge (``offline``, ``nli``)."""
    kinds: dict[str, KindTrial] = {}
    failed_kinds: list[str] = []
    """The kinds whose answer moved or went incoherent."""


class KindRates(SummaryModel):
    failure_rate: Estimate
    moved: Estimate
    incoherent: Estimate
    injected_retrieved: Estimate
    outcomes: dict[str, int]


class ContradictionSummary(ProbeSummary):
    by_kind: dict[str, KindRates]
    moved_rate: Estimate
    incoherent_rate: Estimate
    injected_retrieved_rate: Estimate
    mean_injected_rank: Estimate
    judges: dict[str, int]
    """Trials decided, per judge."""


@probe("corpus_contradiction")
class CorpusContradiction(Probe[ContradictionEvidence]):
    """Injects documents that contradict the gold evidence and judges whether the answer
    moves to the contradicting claim or becomes incoherent.

    Settings: ``kinds`` — which mutations to inject (subset of
    ``("number", "date", "negation", "entity", "near_duplicate")``); ``judge`` — the judge
    spec, ``{"name": "offline"}`` (default) or ``{"name": "nli", "model_name": ...}``.
    A judge passed to ``judge()`` as ``ctx.detectors["contradiction"]`` takes precedence.
    """

    goal: ClassVar[str] = (
        "An injected document contradicting the gold evidence (a changed "
        "number, date, entity or polarity, or a near-duplicate with one "
        "fact changed) moves the answer to the false claim or makes it "
        "incoherent."
    )
    requires: ClassVar[frozenset[Capability]] = frozenset({Capability.OVERLAY})
    overlap_weight: ClassVar[float] = 0.40
    evidence_model = ContradictionEvidence
    summary_model = ContradictionSummary
    family = "structural"
    headlines = (Headline("contradiction", order=30),)

    def __init__(
        self, kinds: Sequence[str] = KINDS, judge: Mapping[str, Any] | str | None = None
    ) -> None:
        if isinstance(kinds, str):
            kinds = (kinds,)
        kinds = tuple(dict.fromkeys(kinds))
        unknown = [k for k in kinds if k not in KINDS]
        if unknown or not kinds:
            raise ValueError(
                f"corpus_contradiction: kinds must be a non-empty subset of "
                f"{', '.join(KINDS)}; got {list(kinds)}"
            )
        self.kinds: tuple[str, ...] = kinds
        spec = {"name": judge} if isinstance(judge, str) else dict(judge or {"name": "offline"})
        self._judge: ContradictionJudge = make_contradiction_judge(spec)
        self.judge_spec = spec

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kinds": list(self.kinds),
            "judge": dict(self.judge_spec),
            "judge_config": self._judge.config(),
        }

    # -- generation ---------------------------------------------------------------------
    def generate(self, ctx: ProbeContext) -> list[Case]:
        questions = ctx.answerable()
        if not questions:
            return []
        vocab: NameVocab | None = None
        names: dict[str, NameInfo] = {}
        if any(k in ("entity", "near_duplicate") for k in self.kinds):
            texts = {d.id: d.text for d in ctx.documents}
            vocab = NameVocab.of(texts.values())
            names = corpus_names(texts, vocab)
        cases: list[Case] = []
        for q in questions:
            cases.extend(self._question_cases(ctx, q, names, vocab))
        return cases

    def _question_cases(
        self, ctx: ProbeContext, q: Case, names: Mapping[str, NameInfo], vocab: NameVocab | None
    ) -> list[Case]:
        group = q.id
        base_meta: dict[str, Any] = {"question_id": q.id}
        evidence = locate_evidence(q, ctx)
        if evidence is None:
            return [
                self.case(
                    group,
                    CLEAN,
                    q.question,
                    expected=q.expected,
                    meta={
                        **base_meta,
                        "unscored": "no gold answer string found in the gold documents",
                    },
                )
            ]
        doc = evidence.doc
        s0, s1 = evidence.sentence
        a0, a1 = evidence.answer
        sentence = doc.text[s0:s1]
        candidates = {n: i for n, i in names.items() if i.doc_ids - {doc.id}}
        base_meta.update(
            {
                "gold_doc_id": doc.id,
                "sentence": sentence,
                "sentence_span": [s0, s1],
                "answer_span": [a0, a1],
                "answer": doc.text[a0:a1],
            }
        )
        kind_cases: list[Case] = []
        applied: list[str] = []
        for kind in self.kinds:
            rng = ctx.rng(q.id, kind)
            if kind == "near_duplicate":
                m = near_duplicate(
                    doc.text, (s0, s1), rng, within=(a0, a1), candidates=candidates, vocab=vocab
                )
                if m is None:
                    continue
                text, new_span = m.text, (m.new_start, m.new_end)
                contradicting = m.text[s0 : s1 + len(m.new) - len(m.old)]
                claim_spans = ([m.start - s0, m.end - s0], [m.new_start - s0, m.new_end - s0])
            else:
                m = mutate(
                    kind,
                    sentence,
                    rng,
                    within=(a0 - s0, a1 - s0),
                    context=doc.text,
                    candidates=candidates,
                    vocab=vocab,
                )
                if m is None:
                    continue
                text, offset = passage_with_context(doc.text, (s0, s1), m.text)
                new_span = (offset + m.new_start, offset + m.new_end)
                contradicting = m.text
                claim_spans = ([m.start, m.end], [m.new_start, m.new_end])
            injected = self._document(q.id, kind, text, doc)
            applied.append(kind)
            kind_cases.append(
                self.case(
                    group,
                    kind,
                    q.question,
                    variation=Variation(overlay=(injected,)),
                    expected=q.expected,
                    meta={
                        **base_meta,
                        "kind": kind,
                        "change": m.change,
                        "injected_doc_id": injected.id,
                        "old": m.old,
                        "new": m.new,
                        "contradicting_sentence": contradicting,
                        "claim_spans": {
                            "original": claim_spans[0],
                            "contradicting": claim_spans[1],
                        },
                        "old_span": [s0 + m.start, s0 + m.end]
                        if kind != "near_duplicate"
                        else [m.start, m.end],
                        "new_span": list(new_span),
                    },
                )
            )
        clean_meta: dict[str, Any] = {
            **base_meta,
            "kinds": applied,
            "not_applicable": [k for k in self.kinds if k not in applied],
        }
        if not applied:
            clean_meta["unscored"] = "no contradiction kind applies to the answer-bearing sentence"
        return [
            self.case(group, CLEAN, q.question, expected=q.expected, meta=clean_meta),
            *kind_cases,
        ]

    def _document(self, question_id: str, kind: str, text: str, gold: Document) -> Document:
        digest = sha256_hex(self.name, question_id, kind, text)[:12]
        return Document(
            id=f"pg-contra-{digest}",
            text=text,
            title=gold.title,
            metadata=copy.deepcopy(dict(gold.metadata)),
            source=SOURCE,
        )

    # -- judging ------------------------------------------------------------------------
    def _judge_for(self, ctx: JudgeContext) -> ContradictionJudge:
        judge = ctx.detectors.get("contradiction") if ctx.detectors else None
        return judge if judge is not None else self._judge

    def judge(
        self, group: str, records: Mapping[str, CaseRecord], ctx: JudgeContext
    ) -> ProbeVerdict:
        clean = records.get(CLEAN)
        if clean is None:
            return ProbeVerdict(None, ContradictionEvidence(unscored="the clean case is missing"))
        meta = clean.case.meta
        evidence = ContradictionEvidence(
            question_id=meta.get("question_id", group), gold_doc_id=meta.get("gold_doc_id")
        )
        if "unscored" in meta:
            evidence.unscored = meta["unscored"]
            return ProbeVerdict(None, evidence)
        errored = self.errored_unscored(records)
        if errored is not None or clean.output is None:
            evidence.unscored = errored or "the clean call has no output"
            return ProbeVerdict(None, evidence)
        judge = self._judge_for(ctx)
        kinds = {
            role: self._judge_kind(judge, clean.output, record)
            for role, record in records.items()
            if role != CLEAN
        }
        judged = {k: v for k, v in kinds.items() if v.outcome != "unscored"}
        evidence.judge = getattr(judge, "name", type(judge).__name__)
        evidence.kinds = kinds
        evidence.failed_kinds = [k for k, v in kinds.items() if v.outcome in FAILING]
        if not kinds:
            evidence.unscored = "no injected case was run"
            return ProbeVerdict(None, evidence)
        if not judged:
            evidence.unscored = "every kind is unscored"
            return ProbeVerdict(None, evidence)
        return ProbeVerdict(bool(evidence.failed_kinds), evidence)

    def failing_roles(
        self, evidence: ContradictionEvidence, roles: Sequence[str]
    ) -> tuple[str, ...]:
        """The kinds whose answer moved or went incoherent."""
        return tuple(evidence.failed_kinds)

    def case_fix_hints(self, case: Case) -> frozenset[str]:
        """``near_duplicate`` for a near-duplicate contradiction."""
        if case.meta.get("kind") == "near_duplicate":
            return frozenset({"near_duplicate"})
        return frozenset()

    def _judge_kind(
        self, judge: ContradictionJudge, clean: PipelineOutput, record: CaseRecord
    ) -> KindTrial:
        meta = record.case.meta
        injected = str(meta.get("injected_doc_id", ""))
        out = KindTrial(
            outcome="unscored",
            injected_doc_id=injected,
            injected_rank=None,
            judge=None,
            change=meta.get("change"),
            old=meta.get("old"),
            new=meta.get("new"),
        )
        if record.output is None:
            error = record.error.type if record.error else "no output"
            out.reason = f"the injected call failed ({error})"
            return out
        ranks = [r.rank for r in record.output.retrieved if r.doc_id == injected]
        out.injected_rank = min(ranks) if ranks else None
        if record.output.refused:
            out.outcome = "refused"
            return out
        change = str(meta.get("change"))
        spans = meta.get("claim_spans") or {}
        original = Claim(
            sentence=str(meta.get("sentence", "")),
            value=str(meta.get("old", "")),
            span=_span(spans.get("original")),
        )
        contradicting = Claim(
            sentence=str(meta.get("contradicting_sentence", "")),
            value=str(meta.get("new", "")),
            span=_span(spans.get("contradicting")),
        )
        out.judge = getattr(judge, "name", type(judge).__name__)
        if not clean.refused:
            before = judge.judge(clean.answer, original, contradicting, change)
            if before.outcome == "unscored":
                out.reason = before.detail.get("reason", "the judge could not read the claims")
                return out
            if before.asserts_contradicting:
                out.reason = "the clean answer already asserts the contradicting claim"
                return out
        decision = judge.judge(record.output.answer, original, contradicting, change)
        out.outcome = decision.outcome
        out.asserts_original = decision.asserts_original
        out.asserts_contradicting = decision.asserts_contradicting
        out.flagged_conflict = decision.flagged_conflict
        if decision.outcome == "unscored":
            out.reason = decision.detail.get("reason", "the judge could not read the claims")
        return out

    # -- summary ------------------------------------------------------------------------
    def summarize(self, verdicts: Sequence[ProbeVerdict]) -> ContradictionSummary:
        """The base failure rate, plus per kind: the failure rate (moved or incoherent among
        judged trials), the moved and incoherent rates, how often the injected document was
        retrieved at all, and outcome counts; overall: the moved / incoherent / retrieved
        rates over all judged trials, the mean best rank of a retrieved injected document
        (bootstrap, seed 0) and which judges decided."""
        trials: dict[str, list[KindTrial]] = {}
        for v in verdicts:
            for kind, t in self.evidence_of(v).kinds.items():
                trials.setdefault(kind, []).append(t)
        by_kind: dict[str, KindRates] = {}
        all_judged: list[KindTrial] = []
        for kind in [k for k in KINDS if k in trials] + sorted(set(trials) - set(KINDS)):
            ts = trials[kind]
            judged = [t for t in ts if t.outcome != "unscored"]
            all_judged.extend(judged)
            n_kind = len(judged)
            by_kind[kind] = KindRates(
                failure_rate=wilson(sum(t.outcome in FAILING for t in judged), n_kind),
                moved=wilson(sum(t.outcome == "moved" for t in judged), n_kind),
                incoherent=wilson(sum(t.outcome == "incoherent" for t in judged), n_kind),
                injected_retrieved=wilson(sum(t.injected_rank is not None for t in judged), n_kind),
                outcomes={o: sum(t.outcome == o for t in ts) for o in OUTCOMES},
            )
        n = len(all_judged)
        ranks = [float(t.injected_rank) for t in all_judged if t.injected_rank is not None]
        judges: dict[str, int] = {}
        for t in all_judged:
            if t.judge:
                judges[t.judge] = judges.get(t.judge, 0) + 1
        return ContradictionSummary(
            **self.summary_fields(verdicts),
            by_kind=by_kind,
            moved_rate=wilson(sum(t.outcome == "moved" for t in all_judged), n),
            incoherent_rate=wilson(sum(t.outcome == "incoherent" for t in all_judged), n),
            injected_retrieved_rate=wilson(len(ranks), n),
            mean_injected_rank=bootstrap_mean(ranks, seed=0),
            judges=dict(sorted(judges.items())),
        )


def _span(value: Any) -> tuple[int, int] | None:
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return int(value[0]), int(value[1])
    return None

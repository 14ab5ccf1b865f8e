"""Context sensitivity: does the answer depend on its context at all?

A generator that answers from memory passes every probe that plants a document (the planted
text never moves it) and every golden question its memory happens to know. This probe takes
the context away, and changes it, and asks whether the answer notices.

For each answerable golden question with gold evidence, the group holds three roles:

* ``original`` — the question as asked (default variation; shared with the golden run);
* ``evidence_removed`` — every gold evidence document masked
  (``Variation(exclude_doc_ids=evidence_doc_ids)``, needs ``Capability.MASK``);
* ``evidence_altered`` — the answer-bearing gold document (``answer_sentence.locate_evidence``)
  masked and replaced, through the overlay, by a copy whose answer fact is changed
  (``mutations.near_duplicate`` restricted to ``number``, ``date`` and ``entity`` changes
  inside the gold answer's span, stream ``ctx.rng("context_sensitivity", question id)``;
  id ``pg-ctxalt-<sha256(probe, question id, text)[:12]>``, the gold document's title and
  metadata, source ``probe:context_sensitivity``), in which every other occurrence of the
  changed answer phrase is changed too, so the copy states one fact. Made only when the pipeline can overlay
  documents (``Capability.OVERLAY``), some kind applies, and no gold answer string is left in
  the altered copy (else following the context could still give the gold answer).

Judging. ``gold(A)``: the answer ``A`` holds a gold answer (``contains_answer``, SQuAD
normalisation); ``readable(r)``: the texts the call could read — its retrieved chunks, or,
when the output reports none, the corpus less the masked documents plus the overlay. A probed
role's outcome is, in this order:

* ``unscored`` — its call errored (the group is then unscored: every role can decide, the
  one rule for errored cases, ``Probe.errored_unscored``);
* ``refused`` — the pipeline refused (``output.refused``): the benign reading, it noticed;
* ``followed`` — (altered) the answer holds the altered answer phrase (``altered_answer``:
  the gold answer as the altered copy states it);
* ``supported`` — ``gold(A)`` and some readable text holds that gold answer (another
  document says the same: nothing shows the context was ignored);
* ``context_free`` — ``gold(A)`` and no readable text holds it: the answer came from no
  context the pipeline had;
* ``changed`` — the answer holds no gold answer: it moved with its context.

The group **fails** when some probed role is ``context_free``; it is unscored when a call
errored, when the ``original`` answer refuses or holds no gold answer (then there is no
answer to compare), or when no probed role was made. Failing roles: the ``context_free`` ones.
A failed group's mechanism is ``ignores_context`` (``core.mechanisms``) whatever component
the swaps blame: the evidence itself shows the answer does not depend on the context.

Fix: no hint; the recommender's generator fix (a grounding check that refuses answers the
retrieved context does not support) is the one that fits. Overlap with standard evaluation
is low (0.1): a group is judged only when the original answer is right, so the golden answer
checks pass on it; only a faithfulness judge reading a stale memory would see it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from probeguard.core.cases import Case
from probeguard.core.documents import Document
from probeguard.core.estimate import Estimate
from probeguard.core.hashing import sha256_hex
from probeguard.core.pipeline import Capability, PipelineOutput, Variation
from probeguard.core.records import CaseRecord
from probeguard.nlp.text import contains_answer
from probeguard.probes.answer_sentence import locate_evidence
from probeguard.probes.base import Headline, JudgeContext, Probe, ProbeContext, ProbeVerdict, probe
from probeguard.probes.entity_names import NameInfo, NameVocab, corpus_names
from probeguard.probes.models import EvidenceModel, ProbeEvidence, ProbeSummary, SummaryModel
from probeguard.probes.mutation_base import Mutation, Span
from probeguard.probes.mutations import near_duplicate
from probeguard.stats import wilson

__all__ = ["ContextEvidence", "ContextSensitivity", "ContextSummary", "ContextTrial"]

ORIGINAL = "original"
REMOVED = "evidence_removed"
ALTERED = "evidence_altered"
PROBED = (REMOVED, ALTERED)
SOURCE = "probe:context_sensitivity"
CHANGES = ("number", "date", "entity")
"""The fact changes an altered document may carry (a negation leaves the gold value in
place, so it cannot tell following the context from ignoring it)."""
OUTCOMES = ("context_free", "supported", "changed", "followed", "refused", "unscored")


class ContextTrial(EvidenceModel):
    """One probed role and what its answer did."""

    outcome: str = "unscored"
    """``context_free``, ``supported``, ``changed``, ``followed``, ``refused`` or
    ``unscored`` (module docstring)."""
    masked: list[str] = []
    holds_gold: bool | None = None
    gold_in_context: bool | None = None
    """Some text the call could read holds the gold answer the answer holds."""
    holds_altered: bool | None = None
    injected_doc_id: str | None = None
    injected_rank: int | None = None
    """Best rank of the altered document among the retrieved chunks (None: not there)."""
    change: str | None = None
    old: str | None = None
    new: str | None = None
    reason: str | None = None


class ContextEvidence(ProbeEvidence):
    question_id: str | None = None
    gold_doc_id: str | None = None
    roles: dict[str, ContextTrial] = {}
    context_free_roles: list[str] = []
    """The probed roles whose answer came from no context the pipeline had."""
    not_made: dict[str, str] = {}
    """Probed roles that were not generated, and why."""


class RoleRates(SummaryModel):
    context_free: Estimate
    """Share of judged trials of the role whose answer was context-free (Wilson)."""
    refused: Estimate
    outcomes: dict[str, int]


class ContextSummary(ProbeSummary):
    by_role: dict[str, RoleRates]


@probe("context_sensitivity")
class ContextSensitivity(Probe[ContextEvidence]):
    """Removes and alters the gold evidence and judges whether the answer notices (rules in
    the module docstring). No settings."""

    goal: ClassVar[str] = (
        "With its gold evidence removed or altered, the pipeline still gives the original "
        "answer that nothing in its context supports: the answer does not depend on its "
        "context."
    )
    requires: ClassVar[frozenset[Capability]] = frozenset({Capability.MASK})
    overlap_weight: ClassVar[float] = 0.1
    evidence_model = ContextEvidence
    summary_model = ContextSummary
    family = "structural"
    headlines = (Headline("context sensitivity", order=35),)

    # -- generation ---------------------------------------------------------------------
    def generate(self, ctx: ProbeContext) -> list[Case]:
        questions = ctx.answerable()
        if not questions:
            return []
        texts = {d.id: d.text for d in ctx.documents}
        vocab = NameVocab.of(texts.values())
        names = corpus_names(texts, vocab)
        cases: list[Case] = []
        for q in questions:
            cases.extend(self._question_cases(ctx, q, names, vocab))
        return cases

    def _question_cases(
        self, ctx: ProbeContext, q: Case, names: Mapping[str, NameInfo], vocab: NameVocab
    ) -> list[Case]:
        group = q.id
        evidence = tuple(q.expected.evidence_doc_ids)
        meta: dict[str, Any] = {"question_id": q.id}
        altered, why_not = self._altered(ctx, q, names, vocab)
        if altered is not None:
            meta["gold_doc_id"] = altered["masked"][0]
        first = meta if altered is not None else {**meta, "not_made": {ALTERED: why_not}}
        cases = [
            self.case(group, ORIGINAL, q.question, expected=q.expected, meta=first),
            self.case(
                group,
                REMOVED,
                q.question,
                expected=q.expected,
                variation=Variation(exclude_doc_ids=evidence),
                meta={**meta, "masked": list(evidence)},
            ),
        ]
        if altered is None:
            return cases
        document: Document = altered.pop("document")
        cases.append(
            self.case(
                group,
                ALTERED,
                q.question,
                expected=q.expected,
                variation=Variation(overlay=(document,), exclude_doc_ids=altered["masked"]),
                meta={**meta, **altered},
            )
        )
        return cases

    def _altered(
        self, ctx: ProbeContext, q: Case, names: Mapping[str, NameInfo], vocab: NameVocab
    ) -> tuple[dict[str, Any] | None, str]:
        """The altered gold document and its meta, or None and why none is made."""
        if Capability.OVERLAY not in ctx.capabilities:
            return None, "the pipeline cannot overlay documents"
        found = locate_evidence(q, ctx)
        if found is None:
            return None, "no gold answer string found in the gold documents"
        doc = found.doc
        candidates = {n: i for n, i in names.items() if i.doc_ids - {doc.id}}
        m = near_duplicate(
            doc.text,
            found.sentence,
            ctx.rng(self.name, q.id),
            within=found.answer,
            candidates=candidates,
            kinds=CHANGES,
            vocab=vocab,
        )
        if m is None:
            return None, "no number, date or entity change applies to the gold answer"
        text, altered_answer = _consistent(doc.text, m, found.answer)
        if any(contains_answer(text, a) for a in q.expected.answers):
            return None, "a gold answer string is left in the altered document"
        digest = sha256_hex(self.name, q.id, text)[:12]
        document = Document(
            id=f"pg-ctxalt-{digest}",
            text=text,
            title=doc.title,
            metadata=copy.deepcopy(dict(doc.metadata)),
            source=SOURCE,
        )
        return {
            "document": document,
            "masked": [doc.id],
            "injected_doc_id": document.id,
            "change": m.change,
            "old": m.old,
            "new": m.new,
            "altered_answer": altered_answer,
        }, ""

    # -- judging ------------------------------------------------------------------------
    def judge(
        self, group: str, records: Mapping[str, CaseRecord], ctx: JudgeContext
    ) -> ProbeVerdict:
        original = records.get(ORIGINAL)
        if original is None:
            return ProbeVerdict(None, ContextEvidence(unscored="the original case is missing"))
        meta = original.case.meta
        evidence = ContextEvidence(question_id=meta.get("question_id", group))
        if "gold_doc_id" in meta:
            evidence.gold_doc_id = meta["gold_doc_id"]
        if meta.get("not_made"):
            evidence.not_made = dict(meta["not_made"])
        out = original.output
        why = self.errored_unscored(records)
        if out is None or why is not None:
            evidence.unscored = why or "the original call errored"
            return ProbeVerdict(None, evidence)
        answers = original.case.expected.answers
        if out.refused or not _holds(out.answer, answers):
            evidence.unscored = "the original answer holds no gold answer: nothing to compare"
            return ProbeVerdict(None, evidence)
        evidence.roles = {
            role: self._trial(record, output, ctx)
            for role in PROBED
            if (record := records.get(role)) is not None and (output := record.output) is not None
        }
        evidence.context_free_roles = [
            r for r, t in evidence.roles.items() if t.outcome == "context_free"
        ]
        if not evidence.roles:
            evidence.unscored = "no probed role was made"
            return ProbeVerdict(None, evidence)
        return ProbeVerdict(bool(evidence.context_free_roles), evidence)

    def _trial(self, record: CaseRecord, out: PipelineOutput, ctx: JudgeContext) -> ContextTrial:
        meta = record.case.meta
        trial = ContextTrial(masked=list(meta.get("masked", [])))
        injected = meta.get("injected_doc_id")
        if injected:
            trial.injected_doc_id = injected
            ranks = [r.rank for r in out.retrieved if r.doc_id == injected]
            trial.injected_rank = min(ranks) if ranks else None
            trial.change, trial.old, trial.new = (
                meta.get("change"),
                meta.get("old"),
                meta.get("new"),
            )
        if out.refused:
            trial.outcome = "refused"
            return trial
        held = [a for a in record.case.expected.answers if contains_answer(out.answer, a)]
        trial.holds_gold = bool(held)
        if injected:
            altered = str(meta.get("altered_answer") or meta.get("new", ""))
            trial.holds_altered = contains_answer(out.answer, altered)
            if trial.holds_altered:
                trial.outcome = "followed"
                return trial
        if not held:
            trial.outcome = "changed"
            return trial
        readable = _readable(out, record.case.variation, ctx.probe)
        trial.gold_in_context = any(_holds(text, held) for text in readable)
        trial.outcome = "supported" if trial.gold_in_context else "context_free"
        return trial

    def failing_roles(self, evidence: ContextEvidence, roles: Sequence[str]) -> tuple[str, ...]:
        """The probed roles whose answer was context-free."""
        return tuple(r for r in evidence.context_free_roles if r in roles)

    def failure_mechanism(self, evidence: ContextEvidence, cause: str) -> str | None:
        """``ignores_context``: the answer came from no context the pipeline had."""
        return "ignores_context" if evidence.context_free_roles else None

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "changes": list(CHANGES)}

    # -- summary ------------------------------------------------------------------------
    def summarize(self, verdicts: Sequence[ProbeVerdict]) -> ContextSummary:
        """The base failure rate, plus per probed role: the context-free and refused rates
        over its judged trials (Wilson; NaN with n = 0) and outcome counts."""
        trials: dict[str, list[ContextTrial]] = {role: [] for role in PROBED}
        for v in verdicts:
            for role, t in self.evidence_of(v).roles.items():
                trials.setdefault(role, []).append(t)
        by_role = {}
        for role, ts in trials.items():
            judged = [t for t in ts if t.outcome != "unscored"]
            by_role[role] = RoleRates(
                context_free=wilson(sum(t.outcome == "context_free" for t in judged), len(judged)),
                refused=wilson(sum(t.outcome == "refused" for t in judged), len(judged)),
                outcomes={o: sum(t.outcome == o for t in ts) for o in OUTCOMES},
            )
        return ContextSummary(**self.summary_fields(verdicts), by_role=by_role)


def _consistent(source: str, m: Mutation, answer: Span) -> tuple[str, str]:
    """The mutated document with the fact changed everywhere, and the changed answer phrase:
    that phrase (the union of the gold answer's span and the mutation's, as mutated)
    replaces every other occurrence of the original phrase (case-insensitive, on word
    boundaries)."""
    start, end = min(answer[0], m.start), max(answer[1], m.end)
    old = source[start:end]
    new = m.text[start : end + len(m.new) - len(m.old)]
    pattern = re.compile(r"(?<!\w)" + re.escape(old) + r"(?!\w)", re.IGNORECASE)
    return pattern.sub(lambda _: new, m.text), new


def _holds(text: str, answers: Sequence[str]) -> bool:
    """``text`` holds one of ``answers`` (SQuAD-normalised containment)."""
    return any(contains_answer(text, a) for a in answers)


def _readable(out: PipelineOutput, variation: Variation, ctx: ProbeContext) -> list[str]:
    """The texts a call could read: its retrieved chunks; when the output reports none, the
    corpus less the masked documents, plus the overlay."""
    if out.retrieved:
        return [r.text for r in out.retrieved]
    masked = set(variation.exclude_doc_ids)
    corpus = [d.text for d in ctx.documents if d.id not in masked]
    return [*corpus, *(d.text for d in variation.overlay)]

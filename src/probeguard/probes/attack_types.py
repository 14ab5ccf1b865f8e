"""Attack types: questions of seven named kinds of trap, each with an explicit expected
behaviour, scored layer by layer — retrieval, answer, abstention, citation — and overall.

Cases come from two sources:

* **dataset** — the hand-written attack cases the scan loads into ``ProbeContext.attack_cases``
  (``probeguard.dataset.attack_types``: the seven types, their modes and the file format);
* **generated** (``generated=True``, the default) — from the golden questions, where it can
  be done honestly without a hand-written dataset, for every answerable question with gold
  evidence, in question order:

  - ``lexical_mismatch``: the question under the ``synonym`` and the ``jargon`` rewrites of
    ``probeguard.nlp.paraphrase`` (each from the stream ``ctx.rng("attack_types",
    "lexical_mismatch", question id, kind)``; a kind whose table holds no word of the
    question makes none, so which cases exist does not depend on the seed), expecting the
    golden answer and evidence;
  - ``false_premise``: the first sentence of a gold document (in evidence order) that holds
    a gold answer literally (case-insensitive, and by ``contains_answer``) and reads as a
    plain sentence (at least 6 words, no ``:``, not a list item) gets that answer's number
    — else its date — changed by ``probeguard.probes.mutations`` (``within`` the answer,
    ``context`` the whole document, so the false value is new to it; stream
    ``ctx.rng("attack_types", "false_premise", question id)``). The question becomes ``"I
    read that <mutated sentence, first word lower-cased unless a name>. <question>"``,
    expecting mode ``correct_premise``: the golden ``answers``, and ``excludes`` = the
    false answer phrase (the answer's span in the mutated sentence, e.g. "45 days" for
    "30 days"). Questions whose answer sentence holds no mutable number or date get none.

  ``max_generated`` caps them, taken alternately from the two lists (lexical first), so
  neither type crowds out the other.

One group per attack case (group id = the dataset case id, or ``gen-lexical-<question
id>-<kind>`` / ``gen-premise-<question id>``), one role ``ask``: the question under the
pipeline as configured. Case meta records ``attack_type`` and ``origin`` (``dataset`` with
its ``file`` and ``line``, or ``generated`` with the ``question_id`` and the rule).

Judging (``probeguard.metrics.layers.score_layers``, with ``k = ctx.top_k``): the citation
layer is *required* for ``citation_trap`` cases (an uncited answer fails it) and applies to
every other case with evidence when the answer cites something. A group fails when some
applicable layer fails; it is unscored when the call errored (the one rule for errored cases,
``Probe.errored_unscored``: the group's only role decides) or no layer applies.

``summarize`` adds, each a Wilson estimate ``{value, low, high, n, method}`` over the groups
where the layer applies (n = 0 → NaN: not counted), ``per_type.<type>.{retrieval, answer,
abstention, citation, pass}`` (with ``cases`` and ``unscored`` counts) and ``overall.{...}``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import ConfigDict, Field

from probeguard.core.cases import Case, Expected
from probeguard.core.documents import Document
from probeguard.core.estimate import Estimate
from probeguard.core.pipeline import PipelineOutput
from probeguard.core.records import CaseRecord
from probeguard.dataset.attack_types import ATTACK_TYPES, attack_type
from probeguard.metrics.layers import LAYERS, score_layers
from probeguard.nlp.paraphrase import paraphrase
from probeguard.nlp.text import contains_answer, sentence_spans
from probeguard.probes.base import (
    Headline,
    JudgeContext,
    Probe,
    ProbeContext,
    ProbeVerdict,
    count_setting,
    names_setting,
    probe,
)
from probeguard.probes.entity_names import NameVocab
from probeguard.probes.models import ProbeEvidence, ProbeSummary, SummaryModel
from probeguard.probes.mutation_base import Mutation
from probeguard.probes.mutations import mutate
from probeguard.stats import wilson

__all__ = [
    "ASK_ROLE",
    "AttackEvidence",
    "AttackSummary",
    "AttackTypes",
    "LEXICAL_KINDS",
    "LayerRates",
    "SUMMARY_LAYERS",
    "false_premise",
]

ASK_ROLE = "ask"
LEXICAL_KINDS = ("synonym", "jargon")
"""The paraphrase kinds that make generated lexical-mismatch cases."""
PREMISE_CHANGES = ("number", "date")
"""The mutations tried, in order, on a gold answer to make a false premise."""
SUMMARY_LAYERS = (*LAYERS, "pass")
FIX_HINTS_BY_TYPE: dict[str, frozenset[str]] = {
    "lexical_mismatch": frozenset({"paraphrase"}),
    "citation_trap": frozenset({"near_duplicate"}),
    "temporal_conflict": frozenset({"outdated"}),
}
"""The fix hints of a failed case, by its attack type."""
_MIN_PREMISE_WORDS = 6


class AttackEvidence(ProbeEvidence):
    attack_type: str | None = None
    origin: str | None = None
    """``dataset`` or ``generated``."""
    question: str | None = None
    mode: str | None = None
    layers: dict[str, bool | None] = {}
    """Per layer (and ``pass``): passed, failed or not applicable (None)."""
    detail: dict[str, Any] = {}
    answer: str | None = None
    failed_layers: list[str] = []


class LayerRates(SummaryModel):
    """Per layer, the Wilson share of passes among the cases where it applies."""

    model_config = ConfigDict(serialize_by_alias=True, validate_by_name=True)

    retrieval: Estimate
    answer: Estimate
    abstention: Estimate
    citation: Estimate
    pass_: Estimate = Field(alias="pass")
    cases: int
    unscored: int


class AttackSummary(ProbeSummary):
    per_type: dict[str, LayerRates]
    overall: LayerRates


_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s")


# -- generated false premises ------------------------------------------------------------
def _premise_clause(sentence: str, vocab: NameVocab) -> str:
    """``sentence`` as a clause after "I read that": trailing punctuation dropped, the first
    word lower-cased unless it is a name (capitalised mid-sentence in the document), an
    acronym or holds a digit."""
    clause = sentence.strip().rstrip(".!?;").rstrip()
    m = re.match(r"[\w’'-]+", clause)
    if m is None:
        return clause
    word = m.group(0)
    bare = re.sub(r"['’]s$", "", word)
    keep = (
        bare in vocab.capitals or word[1:] != word[1:].lower() or any(ch.isdigit() for ch in word)
    )
    return clause if keep else word[:1].lower() + clause[1:]


def false_premise(
    question: Case, documents: Sequence[Document], rng: np.random.Generator
) -> tuple[str, str, Mutation, str] | None:
    """``(question text, false answer phrase, mutation, document id)`` for a generated
    false-premise case (rules in the module docstring), or None when no gold answer
    sentence of ``documents`` has a mutable number or date."""
    answers = question.expected.answers
    for doc in documents:
        vocab: NameVocab | None = None
        for start, end in sentence_spans(doc.text):
            sentence = doc.text[start:end]
            if (
                ":" in sentence
                or _LIST_ITEM.match(sentence)
                or len(sentence.split()) < _MIN_PREMISE_WORDS
            ):
                continue
            for answer in answers:
                found = re.search(re.escape(answer.strip()), sentence, re.IGNORECASE)
                if found is None or not contains_answer(sentence, answer):
                    continue
                within = (found.start(), found.end())
                for change in PREMISE_CHANGES:
                    m = mutate(change, sentence, rng, within=within, context=doc.text)
                    if m is None:
                        continue
                    lo = min(within[0], m.start)
                    hi = max(within[1], m.end) + (m.new_end - m.end)
                    phrase = m.text[lo:hi].strip()
                    if contains_answer(doc.text, phrase) or any(
                        contains_answer(phrase, a) for a in answers
                    ):
                        continue
                    vocab = vocab or NameVocab.of([doc.text])
                    text = f"I read that {_premise_clause(m.text, vocab)}. {question.question}"
                    return text, phrase, m, doc.id
    return None


# -- the probe ---------------------------------------------------------------------------
@probe("attack_types")
class AttackTypes(Probe[AttackEvidence]):
    """Seven attack types from a dataset and from the golden questions, each scored per
    layer (module docstring). Settings: ``types`` (the attack types to run), ``generated``
    (add cases generated from the golden questions) and ``max_generated`` (their cap)."""

    goal = (
        "Questions built to trap a RAG pipeline — reworded, colliding entities, stale "
        "versions, false premises, unanswerable, negation distractors, citation traps — "
        "fail a layer: the evidence is not retrieved, the answer is wrong or takes the "
        "bait, the pipeline does not abstain, or the claim cites the wrong passage."
    )
    overlap_weight = 0.35
    """Answer-layer misses are what standard evaluation sees; excluded values, abstention
    and citations are not."""
    evidence_model = AttackEvidence
    summary_model = AttackSummary
    family = "security"
    headlines = (Headline("attack types: pass", "overall.pass", order=60),)
    uses_attack_cases = True

    def __init__(
        self, types: Sequence[str] = ATTACK_TYPES, generated: bool = True, max_generated: int = 40
    ) -> None:
        self.types = names_setting("types", types, ATTACK_TYPES)
        self.generated = bool(generated)
        self.max_generated = count_setting("max_generated", max_generated)

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "types": list(self.types),
            "generated": self.generated,
            "max_generated": self.max_generated,
        }

    # -- generation ---------------------------------------------------------------------
    def generate(self, ctx: ProbeContext) -> list[Case]:
        cases: list[Case] = []
        seen: dict[str, int] = {}

        def add(group: str, source: Case, meta: dict[str, Any]) -> None:
            n = seen.get(group, 0)
            seen[group] = n + 1
            unique = group if n == 0 else f"{group}~{n + 1}"
            cases.append(
                self.case(
                    unique,
                    ASK_ROLE,
                    source.question,
                    expected=source.expected,
                    tags=source.tags,
                    meta=meta,
                )
            )

        for source in ctx.attack_cases:
            type_ = attack_type(source)
            if type_ not in ATTACK_TYPES:
                raise ValueError(
                    f"attack case {source.id!r} has no known meta['attack_type'] "
                    f"(got {type_!r}); load it with load_attack_cases"
                )
            if type_ in self.types:
                add(
                    source.id,
                    source,
                    {
                        **source.meta,
                        "attack_type": type_,
                        "origin": source.meta.get("origin", "dataset"),
                        "case_id": source.id,
                    },
                )
        if self.generated and self.max_generated:
            for group, source, meta in self._generated(ctx):
                add(group, source, meta)
        return cases

    def _generated(self, ctx: ProbeContext) -> list[tuple[str, Case, dict[str, Any]]]:
        lexical: list[tuple[str, Case, dict[str, Any]]] = []
        premises: list[tuple[str, Case, dict[str, Any]]] = []
        for q in ctx.answerable():
            base = {"origin": "generated", "question_id": q.id, "original": q.question}
            if "lexical_mismatch" in self.types:
                for kind in LEXICAL_KINDS:
                    text = paraphrase(
                        q.question, kind, ctx.rng(self.name, "lexical_mismatch", q.id, kind)
                    )
                    if text is None:
                        continue
                    lexical.append(
                        (
                            f"gen-lexical-{q.id}-{kind}",
                            q.model_copy(update={"question": text}),
                            {
                                **base,
                                "attack_type": "lexical_mismatch",
                                "rule": f"paraphrase:{kind}",
                            },
                        )
                    )
            if "false_premise" in self.types:
                docs = [d for d in map(ctx.document, q.expected.evidence_doc_ids) if d]
                made = false_premise(q, docs, ctx.rng(self.name, "false_premise", q.id))
                if made is not None:
                    text, phrase, m, doc_id = made
                    expected = Expected(
                        mode="correct_premise",
                        answers=q.expected.answers,
                        contains=q.expected.contains,
                        excludes=(*q.expected.excludes, phrase),
                        evidence_doc_ids=q.expected.evidence_doc_ids,
                    )
                    premises.append(
                        (
                            f"gen-premise-{q.id}",
                            q.model_copy(update={"question": text, "expected": expected}),
                            {
                                **base,
                                "attack_type": "false_premise",
                                "rule": f"mutation:{m.change}",
                                "premise_doc_id": doc_id,
                                "true_value": m.old,
                                "false_value": m.new,
                                "false_phrase": phrase,
                            },
                        )
                    )
        merged: list[tuple[str, Case, dict[str, Any]]] = []
        for i in range(max(len(lexical), len(premises))):
            merged.extend(x[i] for x in (lexical, premises) if i < len(x))
        return merged[: self.max_generated]

    # -- judging ------------------------------------------------------------------------
    def judge(
        self, group: str, records: Mapping[str, CaseRecord], ctx: JudgeContext
    ) -> ProbeVerdict:
        record = records.get(ASK_ROLE)
        if record is None:
            return ProbeVerdict(None, AttackEvidence(unscored="no record for the attack case"))
        case = record.case
        type_ = attack_type(case)
        evidence = AttackEvidence(
            attack_type=type_,
            origin=case.meta.get("origin"),
            question=case.question,
            mode=case.expected.mode,
        )
        errored = self.errored_unscored(records)
        if record.output is None or errored is not None:
            evidence.unscored = errored or "no output"
            evidence.layers = dict.fromkeys(SUMMARY_LAYERS)
            return ProbeVerdict(None, evidence)
        scores = score_layers(
            case.expected,
            record.output,
            k=ctx.probe.top_k,
            require_citation=type_ == "citation_trap",
            chunk_docs=_chunk_docs(ctx.probe, record.output),
        )
        layers = scores.layers()
        evidence.layers = layers
        evidence.detail = scores.detail
        evidence.answer = record.output.answer
        passed = layers["pass"]
        if passed is None:
            evidence.unscored = "no layer applies to this case and output"
            return ProbeVerdict(None, evidence)
        evidence.failed_layers = [name for name in LAYERS if layers[name] is False]
        return ProbeVerdict(not passed, evidence)

    def failing_roles(self, evidence: AttackEvidence, roles: Sequence[str]) -> tuple[str, ...]:
        return (ASK_ROLE,)

    def case_fix_hints(self, case: Case) -> frozenset[str]:
        """By the case's attack type (``FIX_HINTS_BY_TYPE``)."""
        return FIX_HINTS_BY_TYPE.get(str(attack_type(case)), frozenset())

    # -- summary ------------------------------------------------------------------------
    def summarize(self, verdicts: Sequence[ProbeVerdict]) -> AttackSummary:
        rows = [(v, self.evidence_of(v)) for v in verdicts]
        return AttackSummary(
            **self.summary_fields(verdicts),
            per_type={
                type_: _layer_rates([(v, e) for v, e in rows if e.attack_type == type_])
                for type_ in self.types
            },
            overall=_layer_rates(rows),
        )


def _layer_rates(rows: Sequence[tuple[ProbeVerdict, AttackEvidence]]) -> LayerRates:
    """Per layer, the Wilson share of passes among the verdicts where it applies."""
    out: dict[str, Any] = {}
    for name in SUMMARY_LAYERS:
        flags = [e.layers.get(name) for _, e in rows]
        scored = [f for f in flags if f is not None]
        out[name] = wilson(sum(1 for f in scored if f), len(scored))
    out["cases"] = len(rows)
    out["unscored"] = sum(1 for v, _ in rows if v.failed is None)
    return LayerRates.model_validate(out)


def _chunk_docs(ctx: ProbeContext, output: PipelineOutput) -> dict[str, str] | None:
    """Document ids of the cited chunks that are not among the retrieved ones, from the
    pipeline's own chunks when it exposes them (built only when needed)."""
    needed = set(output.cited_chunk_ids) - {r.chunk_id for r in output.retrieved}
    if not needed or ctx.chunks is None:
        return None
    return {c.id: c.doc_id for c in ctx.chunks if c.id in needed}

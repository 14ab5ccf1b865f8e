"""The answerable drafts of the synthesizer: a base question per fact and the seven
*evolutions* (after Evol-Instruct, Xu et al. 2023, and RAGAS's test-set generator), each a
rule or template over facts (``probeguard.dataset.synth_facts``), never an LLM.

Every draft's answer is an exact span of the corpus: ``answers`` hold the span's text and
``spans`` its (document id, start, end). The rules:

* ``simple`` — the fact's echo question: "According to <title>, <sentence with the answer
  replaced by its wh-phrase>?";
* ``reasoning`` — the sentence before (else after) the fact's is given as a premise and the
  question follows from it: "<title> says: "<other sentence>" Given that, <wh-clause>?";
* ``multi_context`` — two facts of two documents in one question; ``contains`` holds both
  spans (both documents are evidence);
* ``concretizing`` — the question put as a concrete case from the document's department or
  category metadata: "A case handled under <department> (<title>): <wh-clause>?";
* ``constrained`` — an output constraint: "... Answer with the exact figure (name) only." (``contains``
  holds the span);
* ``comparative`` — two facts of the same unit with different values, in two sentences:
  "Which figure is larger: the one in <title A> for "<masked A>", or the one in <title B> for
  "<masked B>"?"; the answer is the larger span (never for names);
* ``hypothetical`` — "Suppose you had to rely only on <title>: <wh-clause>?";
* ``in_breadth`` — the question widened to the document's scope: "What does <title> cover on
  this topic, and in particular <wh-clause>?".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from probeguard.dataset.synth_facts import Fact, masked, wh_clause

__all__ = ["EVOLUTIONS", "Draft", "Span", "evolve", "question_of"]

Span = tuple[str, int, int]
"""(document id, start, end): ``document.text[start:end]`` is the answer."""


@dataclass(frozen=True)
class Draft:
    """A synthesized case before selection: the question, what a correct answer holds, and
    the spans it rests on. ``type`` is an attack type or None (a golden question)."""

    question: str
    spans: tuple[Span, ...]
    answers: tuple[str, ...] = ()
    contains: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    must_cite: tuple[str, ...] = ()
    must_not_cite: tuple[str, ...] = ()
    evidence_doc_ids: tuple[str, ...] = ()
    mode: str = "answer"
    type: str | None = None
    evolution: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def doc_id(self) -> str:
        """The document the draft is balanced under (its first evidence document; for an
        unanswerable draft, the document it was derived from, in ``meta["derived_from"]``)."""
        if self.evidence_doc_ids:
            return self.evidence_doc_ids[0]
        return str(self.meta.get("derived_from", ""))


def question_of(fact: Fact) -> str:
    """The fact's echo question (the ``simple`` evolution)."""
    return f"According to {fact.title}, {wh_clause(fact)}?"


def _one(fact: Fact, question: str, evolution: str, *, contains: bool = False) -> Draft:
    return Draft(
        question=question,
        spans=(fact.key,),
        answers=() if contains else (fact.answer,),
        contains=(fact.answer,) if contains else (),
        evidence_doc_ids=(fact.doc_id,),
        evolution=evolution,
    )


def _simple(fact: Fact, ctx: _Context) -> Draft | None:
    return _one(fact, question_of(fact), "simple")


def _reasoning(fact: Fact, ctx: _Context) -> Draft | None:
    siblings = [f for f in ctx.by_doc[fact.doc_id] if f.index != fact.index]
    before = [f for f in siblings if f.index < fact.index]
    other = before[-1] if before else (siblings[0] if siblings else None)
    if other is None:
        return None
    premise = other.sentence.replace('"', "'")
    question = f'{fact.title} says: "{premise}" Given that, {wh_clause(fact)}?'
    return _one(fact, question, "reasoning")


def _multi_context(fact: Fact, ctx: _Context) -> Draft | None:
    others = [f for f in ctx.facts if f.doc_id != fact.doc_id]
    if not others:
        return None
    other = others[int(ctx.rng.integers(len(others)))]
    question = (
        f"According to {fact.title}, {wh_clause(fact)}; and according to {other.title}, "
        f"{wh_clause(other)}?"
    )
    return Draft(
        question=question,
        spans=(fact.key, other.key),
        contains=(fact.answer, other.answer),
        evidence_doc_ids=(fact.doc_id, other.doc_id),
        evolution="multi_context",
    )


def _concretizing(fact: Fact, ctx: _Context) -> Draft | None:
    meta = ctx.metadata.get(fact.doc_id, {})
    where = meta.get("department") or meta.get("category") or "this area"
    return _one(
        fact, f"A case handled under {where} ({fact.title}): {wh_clause(fact)}?", "concretizing"
    )


def _constrained(fact: Fact, ctx: _Context) -> Draft | None:
    what = "name" if fact.kind == "name" else "figure"
    question = f"{question_of(fact)} Answer with the exact {what} only."
    return _one(fact, question, "constrained", contains=True)


def _comparative(fact: Fact, ctx: _Context) -> Draft | None:
    rivals = [
        f
        for f in ctx.facts
        if fact.kind != "name"
        and f.unit == fact.unit
        and f.value != fact.value
        and (f.doc_id, f.index) != (fact.doc_id, fact.index)
    ]
    if not rivals:
        return None
    other = rivals[int(ctx.rng.integers(len(rivals)))]
    big = fact if fact.value > other.value else other
    question = (
        f'Which figure is larger: the one in {fact.title} for "{masked(fact, "___")}", '
        f'or the one in {other.title} for "{masked(other, "___")}"?'
    )
    return Draft(
        question=question,
        spans=(big.key, fact.key, other.key),
        answers=(big.answer,),
        evidence_doc_ids=tuple(dict.fromkeys((fact.doc_id, other.doc_id))),
        evolution="comparative",
    )


def _hypothetical(fact: Fact, ctx: _Context) -> Draft | None:
    question = f"Suppose you had to rely only on {fact.title}: {wh_clause(fact)}?"
    return _one(fact, question, "hypothetical")


def _in_breadth(fact: Fact, ctx: _Context) -> Draft | None:
    question = f"What does {fact.title} cover on this topic, and in particular {wh_clause(fact)}?"
    return _one(fact, question, "in_breadth", contains=True)


@dataclass(frozen=True)
class _Context:
    facts: Sequence[Fact]
    by_doc: Mapping[str, Sequence[Fact]]
    metadata: Mapping[str, Mapping[str, Any]]
    rng: np.random.Generator


_RULES: dict[str, Callable[[Fact, _Context], Draft | None]] = {
    "simple": _simple,
    "reasoning": _reasoning,
    "multi_context": _multi_context,
    "concretizing": _concretizing,
    "constrained": _constrained,
    "comparative": _comparative,
    "hypothetical": _hypothetical,
    "in_breadth": _in_breadth,
}

EVOLUTIONS: tuple[str, ...] = tuple(_RULES)
"""``simple`` and the seven evolutions, in report order."""


def evolve(
    facts: Sequence[Fact],
    metadata: Mapping[str, Mapping[str, Any]],
    rng: np.random.Generator,
) -> dict[str, list[Draft]]:
    """Every evolution's drafts, one per fact where its rule applies (by evolution name)."""
    by_doc: dict[str, list[Fact]] = {}
    for fact in facts:
        by_doc.setdefault(fact.doc_id, []).append(fact)
    ctx = _Context(facts=facts, by_doc=by_doc, metadata=metadata, rng=rng)
    out: dict[str, list[Draft]] = {}
    for name, rule in _RULES.items():
        drafts = [rule(fact, ctx) for fact in facts]
        out[name] = [d for d in drafts if d is not None]
    return out

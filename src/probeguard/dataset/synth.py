"""A deterministic, offline synthesizer of golden questions and attack cases from a bare
corpus: ``synthesize(documents, n, seed)``.

Drafts come from rules over the corpus's sentences (``synth_facts``: answer spans;
``synth_evolve``: ``simple`` and the seven evolutions; ``synth_attacks``: the seven attack
types). Selection, in rounds: each round takes the next draft of every *stratum* (each
evolution, ``ABSTAIN`` golden questions, each attack type) in turn, until ``n`` cases are kept or every stratum is spent;
inside a stratum the drafts are dealt round-robin over the documents (document order and each
document's drafts shuffled by the seeded generator), so no document dominates. A draft is
kept only when

1. its answer spans are in the corpus (``text[start:end]`` is an answer or a ``contains``
   string — true by construction, checked again);
2. it is not a near duplicate of a kept case: the same normalised question, or content-word
   sets with Jaccard >= ``NEAR_DUPLICATE`` (``stats.near_duplicates`` counts the drafts
   dropped; ``stats.duplicate_share`` = dropped / considered);
3. with a ``rank`` callable (a lexical baseline: question, k -> ranked document ids), every
   evidence document of an answerable draft is in its top ``k`` (``lexical_mismatch``
   drafts are exempt: missing a lexical retriever is their point);
4. an unanswerable draft's made-up term is absent from every word of the corpus;
5. its question does not hold one of its own answers (``answers``/``contains``, normalised,
   on word boundaries: ``holds``), as a premise sentence quoted by ``reasoning`` can
   (``stats.answer_in_question`` counts these).

Same documents, ``n`` and ``seed`` → the same cases, byte for byte (randomness only from
``numpy.random.default_rng(seed)``). Golden cases are ``Case(probe="golden")``; attack cases
carry ``meta["attack_type"]`` and ``meta["origin"] = "synthesized"``, as
``probeguard.dataset.attack_types`` loads them. ``records`` gives the two JSONL layouts (the
golden-question format, and the attack format with its ``type``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from probeguard.core.cases import Case, Expected
from probeguard.core.documents import Document
from probeguard.dataset.attack_types import ATTACK_TYPES, validate_attack_case
from probeguard.dataset.synth_attacks import attack_drafts
from probeguard.dataset.synth_evolve import EVOLUTIONS, Draft, evolve
from probeguard.dataset.synth_facts import corpus_vocabulary, facts_of, key_terms
from probeguard.dataset.synth_names import name_vocabulary
from probeguard.nlp.text import normalize_answer

__all__ = [
    "ABSTAIN",
    "GENERATOR",
    "NEAR_DUPLICATE",
    "Ranker",
    "SynthStats",
    "Synthesis",
    "holds",
    "jaccard",
    "records",
    "synthesize",
]

GENERATOR = "probeguard.dataset.synth/1"
"""Name and version of the generator, recorded in every case's ``meta``."""
ABSTAIN = "abstain"
"""The stratum of golden questions the corpus cannot answer (``mode="abstain"``): the
unanswerable drafts, dealt separately from the attack type's own, so that a golden set has
questions to decline, as written ones do."""
NEAR_DUPLICATE = 0.85
"""Jaccard of content-word sets at or above which two questions are near duplicates."""

Ranker = Callable[[str, int], Sequence[str]]
"""``rank(question, k)`` → the ids of the top-``k`` documents of a lexical baseline."""


@dataclass(frozen=True)
class SynthStats:
    """What selection did: drafts made and considered, and why some were dropped."""

    drafts: int
    considered: int
    near_duplicates: int
    not_retrieved: int
    answer_in_question: int = 0
    by_type: dict[str, int] = field(default_factory=dict)
    """Kept cases by evolution (golden) or attack type."""
    by_document: dict[str, int] = field(default_factory=dict)

    @property
    def duplicate_share(self) -> float:
        """Near duplicates dropped / drafts considered (NaN when none was considered)."""
        return self.near_duplicates / self.considered if self.considered else float("nan")


@dataclass(frozen=True)
class Synthesis:
    golden: tuple[Case, ...]
    attacks: tuple[Case, ...]
    stats: SynthStats
    seed: int


def _strata(drafts: dict[str, list[Draft]], rng: np.random.Generator) -> list[Iterator[Draft]]:
    """One queue per stratum, each dealt round-robin over documents (seeded order)."""
    queues = []
    for name in sorted(drafts, key=_stratum_order):
        by_doc: dict[str, list[Draft]] = {}
        for draft in drafts[name]:
            by_doc.setdefault(draft.doc_id, []).append(draft)
        docs = sorted(by_doc)
        order = [docs[i] for i in rng.permutation(len(docs))]
        piles = [[by_doc[d][i] for i in rng.permutation(len(by_doc[d]))] for d in order]
        queues.append(_deal(piles))
    return queues


def _stratum_order(name: str) -> int:
    names = (*EVOLUTIONS, ABSTAIN, *ATTACK_TYPES)
    return names.index(name) if name in names else len(names)


def _deal(piles: list[list[Draft]]) -> Iterator[Draft]:
    depth = max((len(p) for p in piles), default=0)
    for i in range(depth):
        for pile in piles:
            if i < len(pile):
                yield pile[i]


def _span_ok(draft: Draft, texts: dict[str, str]) -> bool:
    held = {*draft.answers, *draft.contains}
    return all(texts[d][s:e] in held for d, s, e in draft.spans[:1])


class _Picker:
    """Applies the keep rules (module docstring) and counts what it drops."""

    def __init__(self, texts: dict[str, str], rank: Ranker | None, k: int) -> None:
        self.texts, self.rank, self.k = texts, rank, k
        self.kept: list[Draft] = []
        self.seen: set[str] = set()
        self.terms: list[frozenset[str]] = []
        self.considered = self.duplicates = self.missed = self.answered = 0

    def offer(self, draft: Draft) -> bool:
        self.considered += 1
        if not _span_ok(draft, self.texts):
            return False
        if any(holds(draft.question, a) for a in (*draft.answers, *draft.contains)):
            self.answered += 1
            return False
        norm, terms = normalize_answer(draft.question), key_terms(draft.question)
        if norm in self.seen or any(jaccard(terms, t) >= NEAR_DUPLICATE for t in self.terms):
            self.duplicates += 1
            return False
        if self.rank is not None and draft.mode != "abstain" and draft.type != "lexical_mismatch":
            top = set(self.rank(draft.question, self.k))
            if not set(draft.evidence_doc_ids) <= top:
                self.missed += 1
                return False
        self.kept.append(draft)
        self.seen.add(norm)
        self.terms.append(terms)
        return True


def holds(text: str, phrase: str) -> bool:
    """``phrase`` occurs in ``text`` on word boundaries, both SQuAD-normalised
    (``nlp.text.normalize_answer``)."""
    needle = normalize_answer(phrase)
    return bool(needle) and f" {needle} " in f" {normalize_answer(text)} "


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b| (1.0 for two empty sets)."""
    return len(a & b) / len(a | b) if a or b else 1.0


def _select(queues: list[Iterator[Draft]], picker: _Picker, n: int) -> None:
    live = list(queues)
    while live and len(picker.kept) < n:
        for queue in list(live):
            if len(picker.kept) >= n:
                return
            if not any(picker.offer(d) for d in queue):
                live.remove(queue)


def _case(draft: Draft, i: int, seed: int) -> Case:
    label = draft.type or draft.evolution or ABSTAIN
    meta: dict[str, Any] = {
        "source": "synthesized",
        "generator": GENERATOR,
        "seed": seed,
        "evidence": [{"doc_id": d, "start": s, "end": e} for d, s, e in draft.spans],
        **dict(draft.meta),
    }
    if draft.evolution:
        meta["evolution"] = draft.evolution
    if draft.type:
        meta.update(attack_type=draft.type, origin="synthesized")
    expected = Expected(
        mode=draft.mode,
        answers=draft.answers,
        evidence_doc_ids=draft.evidence_doc_ids,
        contains=draft.contains,
        excludes=draft.excludes,
        must_cite=draft.must_cite,
        must_not_cite=draft.must_not_cite,
    )
    case = Case(
        id=f"syn-{i:04d}-{label}",
        question=draft.question,
        expected=expected,
        tags=("synthesized", label),
        meta=meta,
    )
    if draft.type:
        validate_attack_case(case, draft.type)
    return case


def synthesize(
    documents: Sequence[Document],
    n: int,
    seed: int,
    *,
    rank: Ranker | None = None,
    k: int = 5,
) -> Synthesis:
    """Up to ``n`` golden and attack cases from ``documents`` (rules in the module
    docstring); fewer when the corpus has too few facts."""
    rng = np.random.default_rng(seed)
    names = name_vocabulary(documents)
    facts = [f for doc in documents for f in facts_of(doc, names)]
    metadata = {d.id: d.metadata for d in documents}
    drafts = evolve(facts, metadata, rng)
    drafts.update(attack_drafts(facts, documents, corpus_vocabulary(documents), rng, names))
    drafts[ABSTAIN] = [replace(d, type=None) for d in drafts["unanswerable"]]
    picker = _Picker({d.id: d.text for d in documents}, rank, k)
    _select(_strata(drafts, rng), picker, n)
    cases = [_case(d, i, seed) for i, d in enumerate(picker.kept)]
    stats = SynthStats(
        drafts=sum(len(v) for v in drafts.values()),
        considered=picker.considered,
        near_duplicates=picker.duplicates,
        not_retrieved=picker.missed,
        answer_in_question=picker.answered,
        by_type=dict(sorted(Counter(c.tags[1] for c in cases).items())),
        by_document=dict(sorted(Counter(d.doc_id for d in picker.kept).items())),
    )
    golden = tuple(c for c in cases if "attack_type" not in c.meta)
    attacks = tuple(c for c in cases if "attack_type" in c.meta)
    return Synthesis(golden=golden, attacks=attacks, stats=stats, seed=seed)


_LIST_FIELDS = (
    "answers",
    "evidence_doc_ids",
    "contains",
    "excludes",
    "must_cite",
    "must_not_cite",
)


def records(cases: Sequence[Case], *, attack: bool) -> list[dict[str, Any]]:
    """The JSONL records of ``cases``: the golden-question format
    (``probeguard.corpus.questions``), plus ``type`` when ``attack``; the loader's own keys
    (``origin``, ``attack_type``) are left out of ``meta``."""
    out = []
    for case in cases:
        exp = case.expected
        record: dict[str, Any] = {"id": case.id, "question": case.question, "mode": exp.mode}
        record.update({name: list(getattr(exp, name)) for name in _LIST_FIELDS})
        record["tags"] = list(case.tags)
        meta = {k: v for k, v in case.meta.items() if k not in ("origin", "attack_type")}
        record["meta"] = meta
        if attack:
            record["type"] = case.meta["attack_type"]
        out.append(record)
    return out

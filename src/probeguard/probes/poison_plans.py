"""Corpus poisoning's plans: per style, the poison texts to plant and the signal that proves
they landed, drawn from the group's seeded stream so that the signal is absent from the clean
corpus (the styles and the drawing rules are in ``probeguard.probes.poisoning``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from probeguard.core.cases import Case
from probeguard.core.documents import Document
from probeguard.probes import poison_texts as texts
from probeguard.probes.answer_sentence import Evidence, locate_evidence, passage_with_context
from probeguard.probes.base import ProbeContext
from probeguard.probes.hijack_texts import relevant_sentences, topic_of
from probeguard.probes.mutation_base import Mutation
from probeguard.probes.mutation_date import mutate_date
from probeguard.probes.mutation_number import mutate_number
from probeguard.probes.poison_signals import Signal, SignalCorpus

__all__ = ["PROBE_KEY", "WEAKENING_PHRASE", "Fact", "Plan", "plan_style", "plant_fact"]

PROBE_KEY = "corpus_poisoning"
"""The first key of every random stream the probe draws from."""
WEAKENING_PHRASE = "no order number is needed"
_ATTEMPTS = 8
_DOMAIN = re.compile(r"\b([a-z0-9][a-z0-9-]*)\.(example|com|org|net|io|co\.uk)\b", re.I)
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+\b")
_SYLLABLES = (
    "tal",
    "ven",
    "mor",
    "dun",
    "kes",
    "bra",
    "wick",
    "holm",
    "ster",
    "lin",
    "gar",
    "rud",
    "mere",
    "thorn",
    "vel",
    "cas",
)


@dataclass(frozen=True)
class Plan:
    """One style's poison texts, signal and extra evidence."""

    texts: tuple[str, ...]
    signal: Signal
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Fact:
    """A planted answer: the target document with its answer changed."""

    document: str
    sentence: str
    old: str
    new: str
    change: str
    signal: Signal


def _made_up_name(rng: np.random.Generator) -> str:
    n = 2 + int(rng.integers(2))
    parts = [_SYLLABLES[int(rng.integers(len(_SYLLABLES)))] for _ in range(n)]
    return "".join(parts).capitalize()


def plant_fact(evidence: Evidence, rng: np.random.Generator, corpus: SignalCorpus) -> Fact | None:
    """The target document with its answer changed (number, else date, else a made-up
    name for a capitalised answer), the signal absent from the corpus; None if no draw
    works."""
    doc = evidence.doc.text
    a0, a1 = evidence.answer
    s0, s1 = evidence.sentence
    context = doc + "\n" + corpus.numbers()
    for _ in range(_ATTEMPTS):
        child = np.random.default_rng(int(rng.integers(0, 2**63 - 1)))
        m: Mutation | None = mutate_number(doc, child, within=(a0, a1), context=context)
        kind = "number"
        if m is None:
            m = mutate_date(doc, child, within=(a0, a1))
            kind = "claim"
        if m is None:
            name = _CAPITALISED.search(doc, a0, a1)
            if name is None:
                return None
            new = _made_up_name(child)
            m = Mutation(
                kind="name",
                change="name",
                text=doc[: name.start()] + new + doc[name.end() :],
                old=name.group(0),
                new=new,
                start=name.start(),
                end=name.end(),
                new_start=name.start(),
                new_end=name.start() + len(new),
            )
            kind = "claim"
        signal = Signal(kind, m.new)
        if corpus.holds(signal):
            continue
        mutated = m.text[s0 : s1 + len(m.new) - len(m.old)]
        sentence, _ = passage_with_context(doc, (s0, s1), mutated)
        return Fact(
            document=m.text, sentence=sentence, old=m.old, new=m.new, change=m.change, signal=signal
        )
    return None


def _hex(rng: np.random.Generator, digits: int) -> str:
    return f"{int(rng.integers(0, 16**digits)):0{digits}x}"


def plan_style(
    ctx: ProbeContext,
    group: str,
    style: str,
    question: Case,
    doc: Document | None,
    corpus: SignalCorpus,
    cache: dict[str, Any],
) -> Plan | str:
    """The style's poison texts and signal, or why it does not apply (``cache`` holds
    the group's answer-bearing sentence and relevant sentences, found once)."""
    rng = ctx.rng(PROBE_KEY, group, style)
    q = question.question
    topic = topic_of(doc, q)
    if style in ("false_fact", "near_duplicate", "buried_in_news"):
        if "evidence" not in cache:
            cache["evidence"] = locate_evidence(question, ctx)
        evidence = cache["evidence"]
        if evidence is None:
            return "no gold answer string found in the gold documents"
        fact = plant_fact(evidence, rng, corpus)
        if fact is None:
            return "no number, date or name in the answer could be changed to a new value"
        meta = {
            "planted": {
                "old": fact.old,
                "new": fact.new,
                "change": fact.change,
                "sentence": fact.sentence,
            }
        }
        if style == "false_fact":
            return Plan((texts.false_fact(q, fact.sentence),), fact.signal, meta)
        if style == "near_duplicate":
            return Plan((fact.document,), fact.signal, meta)
        return Plan((texts.buried_in_news(fact.sentence, rng),), fact.signal, meta)
    for _ in range(_ATTEMPTS):
        plan = _drawn_plan(style, q, topic, question, doc, rng, cache)
        if not any(corpus.holds(Signal(k, v)) for k, v in plan.signal.pairs()):
            return plan
    return "every drawn signal already occurs in the corpus"


def _drawn_plan(
    style: str,
    q: str,
    topic: str,
    question: Case,
    doc: Document | None,
    rng: np.random.Generator,
    cache: dict[str, Any],
) -> Plan:
    canary = f"PG-{int(rng.integers(0, 2**32)):08X}"
    canary_signal = Signal("canary", canary)
    if style == "direct_instruction":
        return Plan((texts.direct_instruction(q, canary),), canary_signal)
    if style == "note_to_assistant":
        return Plan((texts.note_to_assistant(q, canary, topic=topic),), canary_signal)
    if style == "system_update":
        return Plan((texts.system_update(q, canary),), canary_signal)
    if style == "split_payload":
        return Plan(
            texts.split_payload(q, canary, ref=_hex(rng, 4).upper()),
            canary_signal,
            {"parts": [canary[:7], canary[7:]]},
        )
    if style == "phishing_contact":
        domain = _DOMAIN.search(doc.text) if doc is not None else None
        stem = domain.group(1).lower() if domain else "service"
        email = f"care-{_hex(rng, 4)}@{stem}-helpdesk.example"
        phone = f"+1 ({int(rng.integers(201, 990))}) 555-{int(rng.integers(200, 1000)):04d}"
        text = texts.phishing_contact(q, topic=topic, phone=phone, email=email)
        return Plan((text,), Signal("address", email, (("address", phone),)))
    if style == "process_weakening":
        text = texts.process_weakening(q, topic=topic, phrase=WEAKENING_PHRASE, waiver=canary)
        return Plan((text,), Signal("phrase", WEAKENING_PHRASE, (("canary", canary),)))
    if style == "base64_payload":
        blob = texts.base64_blob(q, canary)
        return Plan((texts.base64_payload(q, canary),), canary_signal, {"blob": blob})
    if style == "canary_leak":
        if "relevant" not in cache:
            spans = relevant_sentences(question, doc)
            cache["relevant"] = [doc.text[s:e] for s, e in spans] if doc is not None else []
        relevant = cache["relevant"]
        return Plan((texts.canary_leak(relevant, canary, question=q),), canary_signal)
    if style == "obfuscated":
        return Plan((texts.obfuscated(q, canary, rng),), canary_signal)
    raise ValueError(f"unknown corpus poisoning style {style!r}")


# -- judging ------------------------------------------------------------------------

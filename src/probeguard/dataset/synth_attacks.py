"""The attack drafts of the synthesizer: the seven attack types of
``probeguard.dataset.attack_types``, each by a rule over the corpus's facts
(``probeguard.dataset.synth_facts``) and metadata, never an LLM:

* ``temporal_conflict`` — a document whose metadata says it supersedes another (``supersedes``
  on the new one, or ``superseded_by`` on the old one): a fact of the new version with a
  same-unit, different-valued fact in the old one; ``excludes`` the old value;
* ``entity_collision`` — two *confusable* names of the texts (``synth_names.confusable``:
  same head with one modifier changed, a shared proper first token, or a small edit
  distance; "Kestrel Plus" / "Kestrel Pro"; names of the texts, and titles that are names):
  a fact about one (its sentence names it, or its document is titled so; its question
  names it) whose sentence does not name the other, and a same-unit fact about the other
  with a different value; or two documents with confusable titles ("Residential Water Rates" / "Commercial
  Water Rates"; not "Water Conservation Rebates" / "Residential Water Rates", which only share
  a word) that are not versions of one another; ``excludes`` the competitor's value,
  ``meta`` names the ``entity`` asked about and the ``competitor``;
* ``false_premise`` — a fact's number (or a date's year) mutated to a value the document
  never states, asserted in the question ("Why does <title> say that <sentence with the
  mutated value>?"); ``answers`` the true span, ``excludes`` the mutated value;
* ``unanswerable`` — *near miss*: a fact's question narrowed to a made-up name (absent from
  every title and text of the corpus, checked); *far miss*: a question about a made-up
  name on a topic outside the corpus; both expect abstention;
* ``distractor`` — a fact with a same-unit, different-valued sentence elsewhere in the
  corpus that shares at least ``DISTRACTOR_OVERLAP`` content words; asked without the title;
* ``citation_trap`` — a fact of a document whose near duplicate, draft or archived copy
  (metadata ``near_duplicate_of`` / ``superseded_by``) holds a sentence sharing at least
  ``TRAP_OVERLAP`` of its content words; ``must_cite`` the document, ``must_not_cite`` the copy;
* ``lexical_mismatch`` — a fact's question (without the title) with every word of the
  synonym and jargon tables replaced (``probeguard.nlp.paraphrase``); drafts that no table
  changes are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from probeguard.core.documents import Document
from probeguard.dataset.synth_evolve import Draft, question_of
from probeguard.dataset.synth_facts import Fact, key_terms, lower_first, masked, wh_clause
from probeguard.dataset.synth_names import NameVocabulary, confusable, name_spans, name_vocabulary
from probeguard.nlp.paraphrase import jargon, synonym
from probeguard.nlp.text import split_sentences

__all__ = ["ATTACK_RULES", "DISTRACTOR_OVERLAP", "TRAP_OVERLAP", "attack_drafts", "made_up_name"]

DISTRACTOR_OVERLAP = 2
"""Content words a distractor sentence shares with the fact's sentence, at least."""
TRAP_OVERLAP = 0.6
"""Share (Jaccard) of content words a citation trap's copy sentence shares, at least."""

_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_FAR_TEMPLATES = (
    "What is the orbital period of the comet {name}?",
    "Who composed the {name} symphony, and in which year was it first performed?",
    "What is the population of {name} Island?",
    "Which team won the {name} Cup final?",
    "What is the melting point of {name} alloy?",
)
_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"


@dataclass(frozen=True)
class _Corpus:
    facts: Sequence[Fact]
    by_doc: Mapping[str, Sequence[Fact]]
    documents: Mapping[str, Document]
    vocab: frozenset[str]
    names: NameVocabulary
    rng: np.random.Generator


def made_up_name(vocab: frozenset[str], rng: np.random.Generator) -> str:
    """A capitalised three-syllable word absent from ``vocab`` (lower-cased corpus words)."""
    while True:
        syllables = [
            _CONSONANTS[int(rng.integers(len(_CONSONANTS)))] + _VOWELS[int(rng.integers(5))]
            for _ in range(3)
        ]
        name = "".join(syllables) + _CONSONANTS[int(rng.integers(len(_CONSONANTS)))]
        if name not in vocab:
            return name.capitalize()


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _draft(fact: Fact, question: str, type_: str, **fields: Any) -> Draft:
    base: dict[str, Any] = dict(
        question=question,
        spans=(fact.key,),
        answers=(fact.answer,),
        evidence_doc_ids=(fact.doc_id,),
        type=type_,
    )
    base.update(fields)
    return Draft(**base)


def _rival(fact: Fact, pool: Sequence[Fact]) -> Fact | None:
    """The first fact of ``pool`` with the fact's unit, another value, and an answer text
    that neither holds nor is held by the fact's; for a name, also the same question: the
    two wh-clauses share at least ``TRAP_OVERLAP`` (Jaccard) of their content words ("returns
    centre in what, Vermont" / "returns centre in what, New Hampshire")."""
    for other in pool:
        if (
            other.unit == fact.unit
            and other.value != fact.value
            and other.answer not in fact.answer
            and fact.answer not in other.answer
            and (fact.kind != "name" or _same_question(fact, other))
        ):
            return other
    return None


def _same_question(a: Fact, b: Fact) -> bool:
    x, y = key_terms(wh_clause(a)), key_terms(wh_clause(b))
    return len(x & y) / max(1, len(x | y)) >= TRAP_OVERLAP


def _versions(c: _Corpus) -> Iterator[tuple[str, str]]:
    """(new, old) document pairs named by the metadata."""
    for doc in c.documents.values():
        old, new = doc.metadata.get("supersedes"), doc.metadata.get("superseded_by")
        if isinstance(old, str) and old in c.documents:
            yield doc.id, old
        if (
            isinstance(new, str)
            and new in c.documents
            and c.documents[new].metadata.get("supersedes") != doc.id
        ):
            yield new, doc.id


def _temporal(c: _Corpus) -> list[Draft]:
    out = []
    for new, old in sorted(set(_versions(c))):
        for fact in c.by_doc.get(new, ()):
            rival = _rival(fact, c.by_doc.get(old, ()))
            if rival is not None:
                question = f"Under the current rules, {wh_clause(fact)}?"
                out.append(_draft(fact, question, "temporal_conflict", excludes=(rival.answer,)))
    return out


def _collisions(c: _Corpus) -> list[tuple[str, str]]:
    """Ordered pairs of confusable names of several words found in the texts."""
    found = {d.text[a:b] for d in c.documents.values() for a, b in name_spans(d.text, c.names)}
    names = sorted(n for n in found if " " in n)
    return [(a, b) for a in names for b in names if a != b and confusable(a, b, c.names)]


def _title_collisions(c: _Corpus) -> list[tuple[str, str]]:
    """Ordered pairs of documents with confusable titles that are not versions of one
    another (those are temporal conflicts)."""
    versions = {frozenset(p) for p in _versions(c)}
    titles = {d: doc.title for d, doc in c.documents.items()}
    return [
        (a, b)
        for a in sorted(titles)
        for b in sorted(titles)
        if a != b
        and frozenset((a, b)) not in versions
        and confusable(titles[a], titles[b], c.names)
    ]


def _names(fact: Fact, name: str) -> bool:
    """The fact is about ``name``: its sentence names it, or its document is titled so."""
    return name in fact.sentence or fact.title == name


def _entity(c: _Corpus) -> list[Draft]:
    pools = [
        (
            [f for f in c.facts if _names(f, a) and b not in f.sentence and a in question_of(f)],
            [f for f in c.facts if _names(f, b) and a not in f.sentence],
            a,
            b,
        )
        for a, b in _collisions(c)
    ]
    pools += [
        (
            list(c.by_doc.get(a, ())),
            list(c.by_doc.get(b, ())),
            c.documents[a].title,
            c.documents[b].title,
        )
        for a, b in _title_collisions(c)
    ]
    out = []
    for mine, theirs, entity, other in pools:
        for fact in mine:
            rival = _rival(fact, theirs)
            if rival is not None:
                out.append(
                    _draft(
                        fact,
                        question_of(fact),
                        "entity_collision",
                        excludes=(rival.answer,),
                        meta={"entity": entity, "competitor": other},
                    )
                )
    return out


def _mutated(fact: Fact, rng: np.random.Generator, text: str) -> str | None:
    """The answer with its number changed to one the document does not state."""
    found = _NUMBER.search(fact.answer)
    if found is None:
        return None
    raw = found.group(0)
    if fact.kind == "date":
        new = str(int(fact.value) + int(rng.choice([-3, -2, -1, 1, 2, 3])))
        if len(raw) != 4:
            return None
    else:
        factor = float(rng.choice([2.0, 3.0, 0.5]))
        value = fact.value * factor
        new = (
            f"{value:,.2f}"
            if "." in raw
            else f"{round(value):,}"
            if "," in raw
            else str(round(value))
        )
        if new == raw or value == 0:
            return None
    mutated = fact.answer[: found.start()] + new + fact.answer[found.end() :]
    return None if mutated in text else mutated


def _false_premise(c: _Corpus) -> list[Draft]:
    out = []
    for fact in c.facts:
        wrong = _mutated(fact, c.rng, c.documents[fact.doc_id].text)
        if wrong is None:
            continue
        claim = lower_first(masked(fact, wrong))
        question = f"Why does {fact.title} say that {claim}?"
        out.append(
            _draft(fact, question, "false_premise", mode="correct_premise", excludes=(wrong,))
        )
    return out


def _unanswerable(c: _Corpus) -> list[Draft]:
    out = []
    for fact in c.facts:
        name = made_up_name(c.vocab, c.rng)
        question = f"According to {fact.title}, {wh_clause(fact)} for members of the {name} scheme?"
        out.append(_abstain(question, name, "near_miss", fact.doc_id))
    for i, doc_id in enumerate(sorted(c.documents)):
        name = made_up_name(c.vocab, c.rng)
        question = _FAR_TEMPLATES[i % len(_FAR_TEMPLATES)].format(name=name)
        out.append(_abstain(question, name, "far_miss", doc_id))
    return out


def _abstain(question: str, term: str, kind: str, doc_id: str) -> Draft:
    return Draft(
        question=question,
        spans=(),
        mode="abstain",
        type="unanswerable",
        meta={"miss": kind, "absent_term": term, "derived_from": doc_id},
    )


def _distractor(c: _Corpus) -> list[Draft]:
    out = []
    for fact in c.facts:
        terms = key_terms(fact.sentence)
        pool = [
            f
            for f in c.facts
            if f.sentence != fact.sentence
            and len(terms & key_terms(f.sentence)) >= DISTRACTOR_OVERLAP
        ]
        rival = _rival(fact, pool)
        if rival is not None:
            out.append(
                _draft(
                    fact,
                    f"{_capital(wh_clause(fact))}?",
                    "distractor",
                    excludes=(rival.answer,),
                    meta={"distractor_doc_id": rival.doc_id},
                )
            )
    return out


def _copies(c: _Corpus) -> Iterator[tuple[str, str]]:
    """(document, copy not to cite) pairs named by the metadata."""
    for doc in c.documents.values():
        target = doc.metadata.get("near_duplicate_of")
        if isinstance(target, str) and target in c.documents:
            yield target, doc.id
    yield from _versions(c)


def _citation(c: _Corpus) -> list[Draft]:
    out = []
    for doc_id, copy in sorted(set(_copies(c))):
        copy_text = c.documents[copy].text
        copy_terms = [key_terms(s) for s in split_sentences(copy_text)]
        for fact in c.by_doc.get(doc_id, ()):
            terms = key_terms(fact.sentence)
            if any(len(terms & t) / max(1, len(terms | t)) >= TRAP_OVERLAP for t in copy_terms):
                question = f"{_capital(wh_clause(fact))}? Cite the passage you rely on."
                out.append(
                    _draft(
                        fact, question, "citation_trap", must_cite=(doc_id,), must_not_cite=(copy,)
                    )
                )
    return out


def _lexical(c: _Corpus) -> list[Draft]:
    out = []
    for fact in c.facts:
        plain = f"{_capital(wh_clause(fact))}?"
        changed = synonym(plain, c.rng) or plain
        changed = jargon(changed, c.rng) or changed
        if changed != plain:
            out.append(_draft(fact, changed, "lexical_mismatch", meta={"original": plain}))
    return out


ATTACK_RULES: dict[str, Callable[[_Corpus], list[Draft]]] = {
    "lexical_mismatch": _lexical,
    "entity_collision": _entity,
    "temporal_conflict": _temporal,
    "false_premise": _false_premise,
    "unanswerable": _unanswerable,
    "distractor": _distractor,
    "citation_trap": _citation,
}
"""One rule per attack type (the order of ``ATTACK_TYPES``)."""


def attack_drafts(
    facts: Sequence[Fact],
    documents: Sequence[Document],
    vocab: frozenset[str],
    rng: np.random.Generator,
    names: NameVocabulary | None = None,
) -> dict[str, list[Draft]]:
    """Every attack type's drafts (by type), from the facts and the corpus's metadata."""
    by_doc: dict[str, list[Fact]] = {}
    for fact in facts:
        by_doc.setdefault(fact.doc_id, []).append(fact)
    names = name_vocabulary(documents) if names is None else names
    corpus = _Corpus(
        facts=facts,
        by_doc=by_doc,
        documents={d.id: d for d in documents},
        vocab=vocab,
        names=names,
        rng=rng,
    )
    return {name: rule(corpus) for name, rule in ATTACK_RULES.items()}

"""The mutations of ``probeguard dataset selftest`` (rules in ``probeguard.engine.selftest``):
the passing output built from a case, and each mutation with the scorers it targets."""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from probeguard.core.cases import Case, Expected
from probeguard.core.documents import Document
from probeguard.core.pipeline import PipelineOutput, RetrievedChunk

__all__ = ["MUTATIONS", "Pool", "Subject", "passing_output", "word_pool"]

_REFUSAL = "I don't know: the provided documents do not contain this information."
_CLAIM = "Yes, the answer is 42 units, as the documents state."
_YEAR = re.compile(r"\b(19|20)\d\d\b")
_NON_YEAR = re.compile(r"(?<!\d)(?!(?:19|20)\d\d(?!\d))\d+")
_CAPITALISED = re.compile(r"\b[A-Z][a-z]{2,}\b")
_MONTHS = (
    "January February March April May June July August September October November December"
).split()
_MONTH = re.compile(r"\b(" + "|".join(_MONTHS) + r")\b")


@dataclass(frozen=True)
class Subject:
    """One case under test: the case, its passing output and what it must not cite."""

    case: Case
    output: PipelineOutput
    uncitable: frozenset[str]


Mutation = Callable[[Subject, "Pool"], PipelineOutput | None]
Targets = Callable[[Subject], frozenset[str]]


@dataclass(frozen=True)
class Pool:
    """Capitalised words to swap entity names with (sorted, deterministic)."""

    words: tuple[str, ...]


def _chunk(doc_id: str, rank: int) -> RetrievedChunk:
    return RetrievedChunk(chunk_id=f"{doc_id}#selftest", doc_id=doc_id, text=doc_id, rank=rank)


def _gold_text(exp: Expected) -> str:
    return exp.answers[0] if exp.answers else "; ".join(exp.contains) or "See the documents."


def passing_output(case: Case) -> PipelineOutput:
    """The output that should pass every scorer (module docstring)."""
    exp = case.expected
    if exp.mode == "abstain":
        return PipelineOutput(answer=_REFUSAL, refused=True)
    docs = list(dict.fromkeys((*exp.evidence_doc_ids, *exp.must_cite)))
    chunks = [_chunk(d, i) for i, d in enumerate(docs, 1)]
    marks = "".join(f" [{i}]" for i in range(1, len(chunks) + 1))
    return PipelineOutput(
        answer=_gold_text(exp) + marks,
        cited_chunk_ids=[c.chunk_id for c in chunks],
        retrieved=chunks,
    )


def _on_text(edit: Callable[[str, Pool], str]) -> Mutation:
    """A mutation of an answer's text (without its trailing ``[n]`` markers, which are kept);
    ``None`` for a refusal or when ``edit`` changes nothing."""

    def mutate(s: Subject, pool: Pool) -> PipelineOutput | None:
        text, marks = _split_marks(s.output.answer)
        out = edit(text, pool)
        if s.output.refused or out == text:
            return None
        return s.output.model_copy(update={"answer": out + marks})

    return mutate


def _bump(match: re.Match[str]) -> str:
    return str(int(match.group(0)) + 1)


def _wrong_number(text: str, _: Pool) -> str:
    """Non-year numbers, each plus one."""
    return _NON_YEAR.sub(_bump, text)


def _next_month(match: re.Match[str]) -> str:
    return _MONTHS[(_MONTHS.index(match.group(0)) + 1) % 12]


def _wrong_date(text: str, _: Pool) -> str:
    """Years plus one, month names to the next month."""
    return _MONTH.sub(_next_month, _YEAR.sub(_bump, text))


def _swapped_entity(text: str, pool: Pool) -> str:
    """Every capitalised word → a different pool word (CRC-32 of the word picks it)."""
    own = set(_CAPITALISED.findall(text))
    others = [w for w in pool.words if w not in own]
    if not others:
        return text
    return _CAPITALISED.sub(lambda m: others[zlib.crc32(m.group(0).encode()) % len(others)], text)


def _negation(text: str, _: Pool) -> str:
    return "It is not the case that " + text


def _excluded_value(s: Subject, _: Pool) -> PipelineOutput | None:
    """The answer states the case's first ``excludes`` value beside the gold one (the stale
    version's figure of a temporal conflict, the other entity's, the false premise's), so
    only the ``excludes`` rule can catch it."""
    excludes = s.case.expected.excludes
    if s.output.refused or not excludes:
        return None
    text, marks = _split_marks(s.output.answer)
    return s.output.model_copy(update={"answer": f"{excludes[0]}, or {text}{marks}"})


def _drop_citation(s: Subject, _: Pool) -> PipelineOutput | None:
    if s.output.refused or not s.output.cited_chunk_ids:
        return None
    text, _marks = _split_marks(s.output.answer)
    return s.output.model_copy(update={"answer": text, "cited_chunk_ids": []})


def _forbidden_doc(s: Subject) -> str | None:
    ordered = [*s.case.expected.must_not_cite, *sorted(s.uncitable)]
    return ordered[0] if ordered else None


def _cite_forbidden(s: Subject, _: Pool) -> PipelineOutput | None:
    doc = _forbidden_doc(s)
    if s.output.refused or doc is None:
        return None
    chunk = _chunk(doc, len(s.output.retrieved) + 1)
    return s.output.model_copy(
        update={
            "answer": f"{s.output.answer} [{chunk.rank}]",
            "retrieved": [*s.output.retrieved, chunk],
            "cited_chunk_ids": [*s.output.cited_chunk_ids, chunk.chunk_id],
        }
    )


def _drop_evidence(s: Subject, pool: Pool) -> PipelineOutput | None:
    if s.output.refused or not s.case.expected.evidence_doc_ids:
        return None
    gold = set(s.case.expected.evidence_doc_ids)
    kept = [c for c in s.output.retrieved if c.doc_id not in gold]
    filler = _chunk("selftest-unrelated", len(kept) + 1)
    return s.output.model_copy(update={"retrieved": [*kept, filler]})


def _answer_instead_of_refusal(s: Subject, _: Pool) -> PipelineOutput | None:
    if s.case.expected.mode != "abstain":
        return None
    return PipelineOutput(answer=_CLAIM, refused=False)


def _split_marks(answer: str) -> tuple[str, str]:
    """(answer text, its trailing `` [n]`` markers)."""
    match = re.search(r"(?:\s*\[\d+\])+$", answer)
    return (answer, "") if match is None else (answer[: match.start()], match.group(0))


def _must_cite(s: Subject) -> bool:
    return bool(s.case.expected.must_cite)


def _forbids_listed(s: Subject) -> bool:
    return _forbidden_doc(s) in s.case.expected.must_not_cite


def _targets(*names: str, golden: Callable[[Subject], bool] | None = None) -> Targets:
    """A targets rule: ``names``, plus ``golden`` where ``golden(subject)`` holds."""
    return lambda s: frozenset((*names, "golden") if golden and golden(s) else names)


MUTATIONS: dict[str, tuple[Mutation, Targets]] = {
    "wrong_number": (_on_text(_wrong_number), _targets("answer", "golden")),
    "wrong_date": (_on_text(_wrong_date), _targets("answer", "golden")),
    "swapped_entity": (_on_text(_swapped_entity), _targets("answer", "golden")),
    "excluded_value": (_excluded_value, _targets("answer", "golden")),
    "negation": (_on_text(_negation), _targets()),
    "drop_citation": (_drop_citation, _targets("citation", golden=_must_cite)),
    "cite_forbidden": (_cite_forbidden, _targets("citation", golden=_forbids_listed)),
    "drop_evidence": (_drop_evidence, _targets("retrieval")),
    "answer_instead_of_refusal": (_answer_instead_of_refusal, _targets("abstention", "golden")),
}
"""Mutation name → (mutate, the scorers it targets)."""


def word_pool(cases: Sequence[Case], documents: Sequence[Document]) -> Pool:
    """The pool of ``swapped_entity``: capitalised words of the corpus titles and the cases'
    answers."""
    texts = [d.title for d in documents] + [a for c in cases for a in c.expected.answers]
    return Pool(tuple(sorted({w for t in texts for w in _CAPITALISED.findall(t)})))

"""Mutation tests of the evaluator (``probeguard dataset selftest``): does every layer scorer
change its verdict when a passing answer is mutated in the way that scorer exists to catch?

For each case a **passing output** is built from the case itself: mode ``abstain`` → a
refusal; otherwise the answer is the first gold answer (else the ``contains`` strings) with a
``[n]`` marker per cited chunk, the retrieved contexts are one chunk per evidence and
``must_cite`` document (ranks 1…), and the answer cites all of them. The scorers are the
layers of ``metrics.layers.score_layers`` (``require_citation=True``; ``uncitable`` from
``uncitable_doc_ids``) and the golden verdict's ``passed`` (``metrics.golden``).

Mutations (each applies only where it can change something) and the scorers they target:

* ``wrong_number`` — every non-year number n in the answer → n+1: answer, golden;
* ``wrong_date`` — every year y (1900–2099) → y+1, every month name → the next: answer, golden;
* ``swapped_entity`` — every capitalised word → another capitalised word of the corpus
  titles and the cases' answers (chosen by CRC-32, so deterministic): answer, golden;
* ``negation`` — ``"It is not the case that <answer>"``: targets nothing — containment
  scoring is polarity-blind by design; the table shows how often a scorer notices anyway;
* ``drop_citation`` — the answer cites nothing: citation; golden when the case has
  ``must_cite``;
* ``cite_forbidden`` — the answer also cites an uncitable document (``must_not_cite``, an
  outdated or conflicting version): citation; golden when it is a ``must_not_cite`` one;
* ``drop_evidence`` — no evidence document among the retrieved contexts: retrieval;
* ``answer_instead_of_refusal`` — an abstention case answered with a substantive claim:
  abstention, golden.

A targeted (mutation, scorer) pair is *applicable* when the scorer passed the unmutated output;
it *flipped* when the scorer then fails (``False``). A scorer that fails the passing output
is a **baseline failure**. ``SelftestReport.ok``: no baseline failure and every applicable
targeted pair flipped.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from probeguard.core.cases import Case, Expected
from probeguard.core.documents import Document
from probeguard.core.pipeline import PipelineOutput, RetrievedChunk
from probeguard.core.records import CaseRecord
from probeguard.metrics.golden import golden_verdict
from probeguard.metrics.layers import LAYERS, score_layers, uncitable_doc_ids

__all__ = [
    "MUTATIONS",
    "Pool",
    "SCORERS",
    "Cell",
    "SelftestReport",
    "Scorer",
    "passing_output",
    "real_scorers",
    "run_selftest",
]

SCORERS: tuple[str, ...] = (*LAYERS, "golden")
"""The scorers checked, in table order."""

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


Scorer = Callable[[Subject, PipelineOutput], dict[str, bool | None]]
"""Scores one output of a subject: ``{scorer name: True/False/None}``."""
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


def real_scorers(subject: Subject, output: PipelineOutput) -> dict[str, bool | None]:
    """The project's scorers: ``score_layers`` (``k`` = retrieved count, citations
    required) and the golden verdict's ``passed``."""
    case = subject.case
    layers = score_layers(
        case.expected,
        output,
        k=max(1, len(output.retrieved)),
        require_citation=True,
        uncitable=subject.uncitable,
    ).layers()
    record = CaseRecord(case=case, call_key="selftest", output=output)
    verdict = golden_verdict(record)
    return {
        **{name: layers[name] for name in LAYERS},
        "golden": None if verdict is None else verdict.passed,
    }


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
    "negation": (_on_text(_negation), _targets()),
    "drop_citation": (_drop_citation, _targets("citation", golden=_must_cite)),
    "cite_forbidden": (_cite_forbidden, _targets("citation", golden=_forbids_listed)),
    "drop_evidence": (_drop_evidence, _targets("retrieval")),
    "answer_instead_of_refusal": (_answer_instead_of_refusal, _targets("abstention", "golden")),
}
"""Mutation name → (mutate, the scorers it targets)."""


@dataclass
class Cell:
    """One (mutation, scorer) cell: passing baselines mutated, and how many failed."""

    targeted: bool = False
    applicable: int = 0
    flipped: int = 0
    missed: list[str] = field(default_factory=list)
    """Case ids whose targeted scorer did not flip."""


@dataclass
class SelftestReport:
    """The mutation × scorer table and the baseline failures (case id, scorer)."""

    cases: int
    cells: dict[tuple[str, str], Cell]
    baseline_failures: list[tuple[str, str]]

    @property
    def ok(self) -> bool:
        """No baseline failure and every applicable targeted pair flipped (no ``missed``)."""
        return not self.baseline_failures and not any(c.missed for c in self.cells.values())


def _pool(cases: Sequence[Case], documents: Sequence[Document]) -> Pool:
    texts = [d.title for d in documents] + [a for c in cases for a in c.expected.answers]
    return Pool(tuple(sorted({w for t in texts for w in _CAPITALISED.findall(t)})))


def run_selftest(
    cases: Sequence[Case],
    documents: Sequence[Document],
    scorers: Scorer = real_scorers,
) -> SelftestReport:
    """Score each case's passing output and every mutation of it (module docstring)."""
    pool = _pool(cases, documents)
    cells = {(m, s): Cell() for m in MUTATIONS for s in SCORERS}
    failures: list[tuple[str, str]] = []
    for case in cases:
        subject = Subject(case, passing_output(case), uncitable_doc_ids(case.expected, documents))
        base = scorers(subject, subject.output)
        failures += [(case.id, s) for s in SCORERS if base[s] is False]
        for name, (mutate, targets) in MUTATIONS.items():
            mutated = mutate(subject, pool)
            if mutated is not None:
                _tally(cells, name, case.id, base, scorers(subject, mutated), targets(subject))
    return SelftestReport(len(cases), cells, failures)


def _tally(
    cells: dict[tuple[str, str], Cell],
    mutation: str,
    case_id: str,
    base: dict[str, bool | None],
    scored: dict[str, bool | None],
    targets: frozenset[str],
) -> None:
    for scorer in SCORERS:
        if base[scorer] is not True:
            continue
        cell = cells[(mutation, scorer)]
        cell.targeted = cell.targeted or scorer in targets
        cell.applicable += 1
        if scored[scorer] is False:
            cell.flipped += 1
        elif scorer in targets:
            cell.missed.append(case_id)

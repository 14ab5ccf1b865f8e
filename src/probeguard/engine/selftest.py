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
* ``excluded_value`` — ``"<first excludes value>, or <answer>"`` (a wrong temporal answer:
  the superseded version's figure; the other entity's; the false premise's), which only the
  ``excludes`` rule catches: answer, golden;
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

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from probeguard.core.cases import Case
from probeguard.core.documents import Document
from probeguard.core.pipeline import PipelineOutput
from probeguard.core.records import CaseRecord
from probeguard.engine.selftest_mutations import (
    MUTATIONS,
    Pool,
    Subject,
    passing_output,
    word_pool,
)
from probeguard.metrics.golden import golden_verdict
from probeguard.metrics.layers import LAYERS, score_layers, uncitable_doc_ids

__all__ = [
    "MUTATIONS",
    "SCORERS",
    "Cell",
    "Pool",
    "Scorer",
    "SelftestReport",
    "Subject",
    "passing_output",
    "real_scorers",
    "run_selftest",
]

SCORERS: tuple[str, ...] = (*LAYERS, "golden")
"""The scorers checked, in table order."""

Scorer = Callable[[Subject, PipelineOutput], dict[str, bool | None]]
"""Scores one output of a subject: ``{scorer name: True/False/None}``."""


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


@dataclass
class Cell:
    """One (mutation, scorer) cell: passing baselines mutated (``applicable``) and how many
    then failed (``flipped``); the same over the cases where the mutation targets the scorer
    (``targeted_*``), and the ids of those that did not flip (``missed``)."""

    applicable: int = 0
    flipped: int = 0
    targeted_applicable: int = 0
    targeted_flipped: int = 0
    missed: list[str] = field(default_factory=list)

    @property
    def targeted(self) -> bool:
        """The mutation targets this scorer on some case."""
        return self.targeted_applicable > 0


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


def run_selftest(
    cases: Sequence[Case],
    documents: Sequence[Document],
    scorers: Scorer = real_scorers,
) -> SelftestReport:
    """Score each case's passing output and every mutation of it (module docstring)."""
    pool = word_pool(cases, documents)
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
        flipped = scored[scorer] is False
        cell.applicable += 1
        cell.flipped += flipped
        if scorer in targets:
            cell.targeted_applicable += 1
            cell.targeted_flipped += flipped
            cell.missed += [] if flipped else [case_id]

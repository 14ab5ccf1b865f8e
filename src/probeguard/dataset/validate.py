"""Validating case files: the schema, and the references into a corpus.

Every problem names the file, the 1-based line and the field (``Problem``); all are collected,
not only the first. The checks, in order:

1. **schema** — each record parses (``DatasetCase``; golden, attack and eval-record files
   through their own loaders, which stop at their first error);
2. **attack rules** — a case whose ``type`` is an attack type obeys that type's rules
   (``probeguard.dataset.attack_types.validate_attack_case``);
3. **duplicates** — an id, or an input (compared after ``normalize_answer``: case,
   punctuation, articles and spacing ignored), seen before in any of the files;
4. **references** (with a corpus) — every evidence, ``must_cite`` and ``must_not_cite`` id is
   a document; a span lies inside its document's text and equals the evidence's ``text`` when
   one is given; an answerable case with ``answers`` and evidence has at least one answer in
   its evidence (a span, or the whole document; ``contains_answer`` rules);
5. **leakage** — when cases carry a split (``split``, else ``meta["split"]``, else the file's
   stem when it is a split name, ``SPLIT_NAMES``), no evidence document and no input
   appears in two splits.

``SPLIT_NAMES`` are the split names a file stem counts as (``train.jsonl``, as ``dataset
split`` writes them).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from probeguard.core.documents import Document
from probeguard.core.errors import InputError
from probeguard.dataset.attack_types import ATTACK_TYPES, validate_attack_case
from probeguard.dataset.formats import (
    LocatedCase,
    dataset_format,
    load_dataset,
    parse_case,
    schema_records,
    to_case,
)
from probeguard.nlp.text import contains_answer, normalize_answer

__all__ = [
    "SPLIT_NAMES",
    "Problem",
    "Validation",
    "case_split",
    "read_cases",
    "validate_cases",
    "validate_files",
]


SPLIT_NAMES = frozenset({"train", "dev", "validation", "val", "test"})


@dataclass(frozen=True)
class Problem:
    """One problem of one record."""

    file: str
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        return str(InputError(self.message, file=self.file, line=self.line, field=self.field))


@dataclass
class Validation:
    """The cases read and the problems found (none: the files are valid)."""

    cases: list[LocatedCase] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _problem(err: InputError, file: str) -> Problem:
    return Problem(err.file or file, err.line, err.field, err.reason)


def read_cases(path: Path) -> Validation:
    """Parse one file, collecting every bad schema record (other formats: the first error)."""
    out = Validation()
    try:
        if dataset_format(path) != "schema":
            out.cases = load_dataset(path)
            return out
        for line, label, obj in schema_records(path):
            try:
                case = parse_case(obj, file=str(path), line=line, label=label)
            except InputError as err:
                out.problems.append(_problem(err, str(path)))
                continue
            out.cases.append(LocatedCase(case, str(path), line))
    except InputError as err:
        out.problems.append(_problem(err, str(path)))
    return out


def case_split(located: LocatedCase) -> str | None:
    """The split of a case: its ``split``, else ``meta["split"]``, else the file's stem
    when that is one of ``SPLIT_NAMES``."""
    case = located.case
    value = case.split or case.meta.get("split")
    stem = Path(located.file).stem
    if value is None and stem in SPLIT_NAMES:
        return stem
    return str(value) if value is not None else None


_SCHEMA_FIELDS = {
    "mode": "expected",
    "answers": "expected.answers",
    "contains": "expected.contains",
    "excludes": "expected.excludes",
    "evidence_doc_ids": "evidence",
}
"""The attack rules' field names (the golden format's) -> the schema's."""


def _attack_rules(located: LocatedCase) -> Iterable[Problem]:
    case = located.case
    if case.type not in ATTACK_TYPES:
        return
    try:
        validate_attack_case(to_case(case), case.type, file=located.file, line=located.line)
    except InputError as err:
        field = _SCHEMA_FIELDS.get(err.field or "", err.field)
        yield Problem(located.file, located.line, field, err.reason)


def _duplicates(cases: Sequence[LocatedCase]) -> Iterable[Problem]:
    ids: dict[str, LocatedCase] = {}
    inputs: dict[str, LocatedCase] = {}
    for loc in cases:
        first = ids.setdefault(loc.case.id, loc)
        if first is not loc:
            yield Problem(
                loc.file, loc.line, "id", f"duplicate id {loc.case.id!r} (first at {_at(first)})"
            )
        key = normalize_answer(loc.case.input)
        first = inputs.setdefault(key, loc)
        if first is not loc:
            yield Problem(loc.file, loc.line, "input", f"duplicate input (first at {_at(first)})")


def _at(loc: LocatedCase) -> str:
    return f"{Path(loc.file).name}:{loc.line}" if loc.line is not None else Path(loc.file).name


def _references(loc: LocatedCase, docs: dict[str, Document]) -> Iterable[Problem]:
    case = loc.case
    for i, ev in enumerate(case.evidence):
        where = f"evidence.{i}"
        doc = docs.get(ev.doc_id)
        if doc is None:
            yield Problem(
                loc.file, loc.line, f"{where}.doc_id", f"{ev.doc_id!r} is not in the corpus"
            )
            continue
        if ev.start is not None and ev.end is not None and ev.end > len(doc.text):
            yield Problem(
                loc.file,
                loc.line,
                f"{where}.end",
                f"span {ev.start}:{ev.end} is past the end of {ev.doc_id!r} ({len(doc.text)} chars)",
            )
        elif ev.text is not None and ev.text != doc.text[ev.start : ev.end]:
            yield Problem(
                loc.file,
                loc.line,
                f"{where}.text",
                f"does not match {ev.doc_id!r}[{ev.start}:{ev.end}] = "
                f"{doc.text[ev.start : ev.end][:60]!r}",
            )
    for name in ("must_cite", "must_not_cite"):
        for doc_id in getattr(case.expected, name):
            if doc_id not in docs:
                yield Problem(
                    loc.file, loc.line, f"expected.{name}", f"{doc_id!r} is not in the corpus"
                )
    yield from _answer_in_evidence(loc, docs)


def _answer_in_evidence(loc: LocatedCase, docs: dict[str, Document]) -> Iterable[Problem]:
    case = loc.case
    if case.expected.must_abstain or not case.expected.answers or not case.evidence:
        return
    texts = [
        docs[e.doc_id].text[e.start : e.end] if e.start is not None else docs[e.doc_id].text
        for e in case.evidence
        if e.doc_id in docs and (e.end is None or e.end <= len(docs[e.doc_id].text))
    ]
    if not texts:
        return
    if not any(contains_answer(t, a) for t in texts for a in case.expected.answers):
        yield Problem(
            loc.file,
            loc.line,
            "expected.answers",
            "no answer appears in the evidence "
            f"({', '.join(repr(a) for a in case.expected.answers[:3])} not in "
            f"{', '.join(case.evidence_doc_ids)})",
        )


def _leakage(cases: Sequence[LocatedCase]) -> Iterable[Problem]:
    doc_split: dict[str, tuple[str, LocatedCase]] = {}
    input_split: dict[str, tuple[str, LocatedCase]] = {}
    for loc in cases:
        split = case_split(loc)
        if split is None:
            continue
        for doc_id in loc.case.evidence_doc_ids:
            other, first = doc_split.setdefault(doc_id, (split, loc))
            if other != split:
                yield Problem(
                    loc.file,
                    loc.line,
                    "evidence",
                    f"document {doc_id!r} is in split {split!r} and in split {other!r} "
                    f"(at {_at(first)}): leakage",
                )
        other, first = input_split.setdefault(normalize_answer(loc.case.input), (split, loc))
        if other != split:
            yield Problem(
                loc.file,
                loc.line,
                "input",
                f"the same input is in split {split!r} and in split {other!r} (at {_at(first)})",
            )


def validate_cases(
    cases: Sequence[LocatedCase],
    documents: Sequence[Document] | None = None,
) -> list[Problem]:
    """The problems of parsed cases (checks 2-5 of the module docstring), in check order."""
    problems = [p for loc in cases for p in _attack_rules(loc)]
    problems += _duplicates(cases)
    if documents is not None:
        docs = {d.id: d for d in documents}
        problems += [p for loc in cases for p in _references(loc, docs)]
    problems += _leakage(cases)
    return problems


def validate_files(
    paths: Sequence[Path], documents: Sequence[Document] | None = None
) -> Validation:
    """Read and validate case files together (duplicates and leakage across them)."""
    out = Validation()
    golden: set[str] = set()
    for path in paths:
        one = read_cases(Path(path))
        out.cases += one.cases
        out.problems += one.problems
        if one.cases and _is_golden(Path(path)):
            golden.add(str(path))
    problems = validate_cases(out.cases, documents)
    out.problems += [_golden_names(p) if p.file in golden else p for p in problems]
    return out


_GOLDEN_FIELDS = (
    ("input", "question"),
    ("evidence", "evidence_doc_ids"),
    ("expected.must_abstain", "mode"),
    ("expected.must_correct_premise", "mode"),
    ("expected.", ""),
)
"""Schema field (prefix) -> the golden-question format's name for it."""


def _is_golden(path: Path) -> bool:
    try:
        return dataset_format(path) in ("golden", "attack")
    except InputError:
        return False


def _golden_names(problem: Problem) -> Problem:
    """A problem of a golden-question or attack-case file, named in that file's terms
    (``evidence.0.doc_id`` -> ``evidence_doc_ids``, ``expected.answers`` -> ``answers``)."""
    name = problem.field or ""
    for schema, golden in _GOLDEN_FIELDS:
        if (
            name == schema
            or name.startswith(schema + ".")
            or (schema.endswith(".") and name.startswith(schema))
        ):
            name = golden or name[len(schema) :]
            break
    return replace(problem, field=name or None)

"""The case schema (``probeguard.dataset.schema``) and the older formats, both ways.

* golden questions and attack cases (``probeguard.corpus.questions``,
  ``probeguard.dataset.attack_types``): ``question`` -> ``input``, ``mode`` ->
  ``expected.must_abstain`` / ``must_correct_premise``, ``evidence_doc_ids`` -> ``evidence``
  (whole documents), ``type`` -> ``type``; the schema's fields the older format lacks
  (``evolution``, ``difficulty``, ``source``, ``split``, ``recorded``, and ``evidence`` with
  spans) travel as ``meta`` keys of those names (the synthesizer writes them so), so schema
  -> golden -> schema is the identity and so is golden -> schema -> golden up to defaults (a
  ``meta.source`` of ``written``, a span-less ``meta.evidence``, are not written back). A
  ``meta`` value that does not fit its schema field (or an ``evidence`` list naming other
  documents than ``evidence_doc_ids``) stays in ``meta``. The loaders' own bookkeeping, the
  ``meta`` keys ``attack_type``, ``origin``, ``file`` and ``line`` of attack cases, is
  dropped and re-added by the loader;
* eval records (``probeguard.dataset.eval_records``): ``groundTruth`` -> ``expected.answers``
  (one), ``answer`` / ``retrievalContext`` / ``retrievalRelevance`` -> ``recorded``.

``load_dataset`` reads any of them, telling the format from the first record: a ``question``
key is the golden format (with ``type``, attack cases), keys all among the eval-record fields
an eval record (CSV and XLSX always), anything else the schema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from probeguard.core.cases import Case, Expected
from probeguard.core.errors import InputError
from probeguard.corpus.file_reading import iter_json_records
from probeguard.corpus.questions import load_questions
from probeguard.dataset.attack_types import (
    ATTACK_TYPES,
    load_attack_cases,
    validate_attack_case,
)
from probeguard.dataset.eval_records import FIELDS as EVAL_FIELDS
from probeguard.dataset.eval_records import EvalRecord, load_eval_records
from probeguard.dataset.schema import DatasetCase, Evidence, ExpectedSpec, Recorded

__all__ = [
    "LocatedCase",
    "dataset_format",
    "dump_case",
    "from_case",
    "from_eval_record",
    "load_case_file",
    "load_dataset",
    "parse_case",
    "schema_records",
    "to_case",
    "to_eval_record",
    "to_golden_record",
    "write_dataset",
]

_LIFTED = ("evolution", "difficulty", "source", "split", "recorded", "evidence")
"""The schema fields the golden format carries as ``meta`` keys."""
_LOADER_META = ("attack_type", "origin", "file", "line")
_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json"}
_LINE = re.compile(r":line (\d+)$")


@dataclass(frozen=True)
class LocatedCase:
    """A case with the file and 1-based line it was read from (None when unknown)."""

    case: DatasetCase
    file: str
    line: int | None


def _spans_matter(evidence: Iterable[Evidence]) -> bool:
    return any(e.start is not None or e.text is not None for e in evidence)


def _fits(key: str, value: Any) -> bool:
    try:
        DatasetCase.model_validate({"id": "-", "input": "-", key: value})
    except ValidationError:
        return False
    return True


def _lift(meta: dict[str, Any], evidence_doc_ids: tuple[str, ...]) -> dict[str, Any]:
    """Pop from ``meta`` the schema fields it carries (module docstring)."""
    lifted: dict[str, Any] = {}
    for key in _LIFTED:
        if key not in meta or meta[key] is None or not _fits(key, meta[key]):
            continue
        if key == "evidence":
            ids = tuple(dict.fromkeys(e["doc_id"] for e in meta[key]))
            if ids != evidence_doc_ids:
                continue
        lifted[key] = meta.pop(key)
    return lifted


def from_case(case: Case, *, line_meta: bool = True) -> DatasetCase:
    """The schema record of a golden or attack case as its loader returns it."""
    meta = dict(case.meta)
    type_ = meta.get("attack_type")
    if type_ is not None and line_meta:
        for key in _LOADER_META:
            meta.pop(key, None)
    exp = case.expected
    lifted = _lift(meta, exp.evidence_doc_ids)
    evidence = lifted.pop("evidence", [{"doc_id": d} for d in exp.evidence_doc_ids])
    return DatasetCase.model_validate(
        {
            "id": case.id,
            "input": case.question,
            "expected": ExpectedSpec(
                answers=exp.answers,
                contains=exp.contains,
                excludes=exp.excludes,
                must_abstain=exp.mode == "abstain",
                must_correct_premise=exp.mode == "correct_premise",
                must_cite=exp.must_cite,
                must_not_cite=exp.must_not_cite,
            ),
            "evidence": evidence,
            "type": type_,
            "tags": case.tags,
            "meta": meta,
            **lifted,
        }
    )


def _extra(case: DatasetCase) -> dict[str, Any]:
    extra: dict[str, Any] = {
        key: getattr(case, key)
        for key in ("evolution", "difficulty", "split")
        if getattr(case, key) is not None
    }
    if case.source != "written":
        extra["source"] = case.source
    if case.recorded is not None:
        extra["recorded"] = case.recorded.model_dump(mode="json")
    if _spans_matter(case.evidence):
        extra["evidence"] = [e.model_dump(mode="json", exclude_none=True) for e in case.evidence]
    return extra


def to_golden_record(case: DatasetCase) -> dict[str, Any]:
    """The golden-question record (with ``type``: the attack-case record) of a schema case."""
    exp = case.expected
    record: dict[str, Any] = {"id": case.id, "question": case.input, "mode": exp.mode}
    if case.type is not None:
        record["type"] = case.type
    lists = {
        "answers": exp.answers,
        "evidence_doc_ids": case.evidence_doc_ids,
        "contains": exp.contains,
        "excludes": exp.excludes,
        "must_cite": exp.must_cite,
        "must_not_cite": exp.must_not_cite,
        "tags": case.tags,
    }
    record.update({k: list(v) for k, v in lists.items() if v})
    meta = {**case.meta, **_extra(case)}
    if meta:
        record["meta"] = meta
    return record


def to_case(case: DatasetCase) -> Case:
    """The ``core.cases.Case`` a scan runs (probe ``golden``; an attack type in
    ``meta["attack_type"]``, as the attack-case loader sets it)."""
    exp = case.expected
    meta = {**case.meta, **_extra(case)}
    if case.type in ATTACK_TYPES:
        meta = {**meta, "attack_type": case.type, "origin": "dataset"}
    return Case(
        id=case.id,
        question=case.input,
        expected=Expected(
            mode=exp.mode,
            answers=exp.answers,
            evidence_doc_ids=case.evidence_doc_ids,
            contains=exp.contains,
            excludes=exp.excludes,
            must_cite=exp.must_cite,
            must_not_cite=exp.must_not_cite,
        ),
        tags=case.tags,
        meta=meta,
    )


def from_eval_record(record: EvalRecord) -> DatasetCase:
    """The schema record of an eval record (``groundTruth`` becomes the one answer)."""
    recorded = None
    if any(
        v is not None for v in (record.answer, record.retrieval_context, record.retrieval_relevance)
    ):
        recorded = Recorded(
            answer=record.answer,
            contexts=record.retrieval_context,
            relevance=record.retrieval_relevance,
        )
    answers = (record.ground_truth,) if record.ground_truth is not None else ()
    return DatasetCase(
        id=record.id,
        input=record.input,
        expected=ExpectedSpec(answers=answers),
        tags=record.tags,
        recorded=recorded,
    )


def to_eval_record(case: DatasetCase) -> dict[str, Any]:
    """The eval record (JSON form) of a schema case: its first answer is the ``groundTruth``
    (an eval record holds one reference answer)."""
    record: dict[str, Any] = {"id": case.id, "input": case.input}
    rec = case.recorded
    if rec is not None and rec.answer is not None:
        record["answer"] = rec.answer
    if case.expected.answers:
        record["groundTruth"] = case.expected.answers[0]
    if rec is not None and rec.contexts is not None:
        record["retrievalContext"] = list(rec.contexts)
    if rec is not None and rec.relevance is not None:
        record["retrievalRelevance"] = list(rec.relevance)
    if case.tags:
        record["tags"] = list(case.tags)
    return record


def _field(error: dict[str, Any]) -> str:
    return ".".join(str(part) for part in error["loc"]) or "record"


def parse_case(obj: Any, *, file: str, line: int | None, label: str = "") -> DatasetCase:
    """One schema record; a bad one raises ``InputError`` naming the file, line and the
    first failing field (dotted: ``expected.answers``)."""
    if not isinstance(obj, dict):
        raise InputError(f"{label}expected a JSON object", file=file, line=line)
    try:
        return DatasetCase.model_validate(obj)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise InputError(
            f"{label}{first['msg']}", file=file, line=line, field=_field(dict(first))
        ) from None


def dataset_format(path: Path) -> str:
    """``golden``, ``attack``, ``eval`` or ``schema``: the format of a case file (module
    docstring)."""
    fmt = _SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        return "eval"
    first = next(iter_json_records(path, fmt, container_key="cases"), None)
    obj = first[2] if first is not None else None
    if not isinstance(obj, dict) or "question" not in obj:
        keys = set(obj) if isinstance(obj, dict) else set()
        return "eval" if keys and keys <= set(EVAL_FIELDS) and "input" in keys else "schema"
    return "attack" if "type" in obj else "golden"


def schema_records(path: Path) -> Iterator[tuple[int, str, Any]]:
    """``(line, label, object)`` of each record of a schema file (JSONL, or JSON: a list or
    ``{"cases": [...]}``)."""
    fmt = _SUFFIXES.get(path.suffix.lower(), "jsonl")
    yield from iter_json_records(path, fmt, container_key="cases")


def _golden(path: Path, attack: bool) -> list[LocatedCase]:
    lines: dict[str, int] = {}

    def remember(case: Case, obj: dict[str, Any], p: Path, line: int, label: str) -> Case:
        lines[case.id] = line
        return case

    cases = load_attack_cases(path) if attack else load_questions(path, check=remember)
    return [
        LocatedCase(from_case(c), str(path), c.meta.get("line") if attack else lines.get(c.id))
        for c in cases
    ]


def _eval_line(source: str) -> int | None:
    m = _LINE.search(source)
    return int(m.group(1)) if m else None


def load_dataset(path: str | Path) -> list[LocatedCase]:
    """The cases of a schema, golden-question, attack-case or eval-record file, in file
    order; the first bad record raises ``InputError`` naming the file, line and field."""
    path = Path(path)
    if not path.is_file():
        raise InputError("no such file", file=str(path))
    fmt = dataset_format(path)
    if fmt in ("golden", "attack"):
        return _golden(path, fmt == "attack")
    if fmt == "eval":
        return [
            LocatedCase(from_eval_record(r), str(path), _eval_line(r.source))
            for r in load_eval_records(path)
        ]
    out = [
        LocatedCase(parse_case(obj, file=str(path), line=line, label=label), str(path), line)
        for line, label, obj in schema_records(path)
    ]
    if not out:
        raise InputError("the file has no cases", file=str(path))
    return out


def dump_case(case: DatasetCase) -> str:
    """One JSONL line (no newline): every field, in schema order, non-ASCII kept."""
    return json.dumps(case.model_dump(mode="json"), ensure_ascii=False)


def write_dataset(cases: Iterable[DatasetCase], path: str | Path) -> Path:
    """Write ``cases`` as schema JSONL (byte-identical for the same cases)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(dump_case(c) + "\n" for c in cases), encoding="utf-8")
    return path


def _check_ids(loc: LocatedCase, corpus_ids: Collection[str]) -> None:
    case = loc.case
    named = [(f"evidence.{i}.doc_id", e.doc_id) for i, e in enumerate(case.evidence)]
    named += [
        (f"expected.{k}", d)
        for k in ("must_cite", "must_not_cite")
        for d in getattr(case.expected, k)
    ]
    for field, doc_id in named:
        if doc_id not in corpus_ids:
            raise InputError(
                f"document {doc_id!r} is not in the corpus",
                file=loc.file,
                line=loc.line,
                field=field,
            )


def load_case_file(
    path: str | Path,
    *,
    corpus_ids: set[str] | frozenset[str] | None = None,
    attack: bool = False,
) -> list[Case]:
    """The ``Case``s a scan runs from a questions (or, ``attack``, attack-case) file: a
    golden-question or attack-case file through its own loader, as before; a schema or
    eval-record file through ``load_dataset`` and ``to_case``, every evidence and citation id
    checked against ``corpus_ids``, and, for ``attack``, each case's attack-type rules
    (``InputError`` naming the file, line and field)."""
    path = Path(path)
    fmt = dataset_format(path) if path.is_file() else "golden"
    if fmt in ("golden", "attack"):
        if attack:
            return load_attack_cases(path, corpus_ids=corpus_ids)
        return load_questions(path, corpus_ids=corpus_ids)
    cases = []
    for loc in load_dataset(path):
        if corpus_ids is not None:
            _check_ids(loc, corpus_ids)
        if attack and loc.case.type is None:
            raise InputError(
                f"missing type; one of {', '.join(ATTACK_TYPES)}",
                file=loc.file,
                line=loc.line,
                field="type",
            )
        if attack and loc.case.type is not None:
            validate_attack_case(to_case(loc.case), loc.case.type, file=loc.file, line=loc.line)
        cases.append(to_case(loc.case))
    return cases

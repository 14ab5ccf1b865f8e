"""Importing foreign test sets into the case schema (``probeguard dataset import``).

A mapping is a list of ``SRC=DST`` pairs. ``SRC`` names a field of the foreign record
(dotted for a nested one: ``expected.contains``); ``DST`` is one of ``DESTINATIONS``:

* ``id``, ``input``, ``type``, ``evolution``, ``difficulty``, ``split``, ``tags``;
* ``expected.answers|contains|excludes|must_cite|must_not_cite`` (a string becomes a
  one-item list), ``expected.must_abstain``, ``expected.must_correct_premise`` (booleans);
* ``evidence`` — document ids (a string or a list);
* ``evidence.text`` — passages given as text: each is looked up in the corpus (``documents``;
  the first document holding it verbatim, first occurrence) and becomes
  ``{doc_id, start, end, text}``; a passage found nowhere (or any, without a corpus) is kept
  in ``meta["reference_contexts"]``;
* ``recorded.answer``, ``recorded.contexts``, ``recorded.relevance``;
* ``meta.NAME`` — kept under ``meta[NAME]``; ``-`` drops the field.

Every field no pair names is kept in ``meta`` under its own name (nothing is lost). A record
without an id gets ``q-<12 hex of sha256(input)>``; ``source`` is ``imported``. A ``type``
that is an attack type sets the mode it requires (``unanswerable`` -> ``must_abstain``,
``false_premise`` -> ``must_correct_premise``) unless a pair sets it; excludes stay allowed on
an unanswerable case. ``--map`` pairs override a preset's pair for the same source or
destination. Files: JSONL, JSON (a list or ``{"records": [...]}``), or CSV (a header row;
a cell that starts with ``[`` is read as a JSON list, else as a Python list literal, the way
pandas writes lists). Errors name the file, line and the source field.
"""

from __future__ import annotations

import ast
import csv
import io
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from probeguard.core.documents import Document
from probeguard.core.errors import InputError
from probeguard.corpus.file_reading import iter_json_records, read_utf8
from probeguard.corpus.questions import question_id
from probeguard.corpus.record_validation import type_name
from probeguard.dataset.attack_types import TYPE_MODES
from probeguard.dataset.formats import parse_case
from probeguard.dataset.schema import DatasetCase

__all__ = ["DESTINATIONS", "PRESETS", "ImportResult", "import_records", "parse_maps"]

_LISTS = (
    "expected.answers",
    "expected.contains",
    "expected.excludes",
    "expected.must_cite",
    "expected.must_not_cite",
    "tags",
    "evidence",
    "evidence.text",
    "recorded.contexts",
    "recorded.relevance",
)
_SCALARS = ("id", "input", "type", "evolution", "difficulty", "split", "recorded.answer")
_FLAGS = ("expected.must_abstain", "expected.must_correct_premise")
DESTINATIONS: tuple[str, ...] = (*_SCALARS, *_LISTS, *_FLAGS, "meta.NAME", "-")
"""Where a source field can go (module docstring)."""

PRESETS: dict[str, tuple[tuple[str, str], ...]] = {
    "ragas": (
        ("user_input", "input"),
        ("reference", "expected.answers"),
        ("reference_contexts", "evidence.text"),
        ("retrieved_contexts", "recorded.contexts"),
        ("response", "recorded.answer"),
    ),
    "deepeval": (
        ("input", "input"),
        ("expected_output", "expected.answers"),
        ("context", "evidence.text"),
        ("retrieval_context", "recorded.contexts"),
        ("actual_output", "recorded.answer"),
    ),
    "ig-rc": (
        ("id", "id"),
        ("input", "input"),
        ("groundTruth", "expected.answers"),
        ("retrievalContext", "recorded.contexts"),
        ("retrievalRelevance", "recorded.relevance"),
        ("answer", "recorded.answer"),
        ("tags", "tags"),
    ),
    "case-attack": (
        ("case_id", "id"),
        ("question", "input"),
        ("input", "input"),
        ("query", "input"),
        ("attack_type", "type"),
        ("expected.answers", "expected.answers"),
        ("expected.contains", "expected.contains"),
        ("expected.excludes", "expected.excludes"),
        ("evidence_ids", "evidence"),
        ("difficulty", "difficulty"),
        ("notes", "meta.notes"),
    ),
}
"""RAGAS test sets (``user_input``/``reference``/``reference_contexts``), DeepEval goldens
(``input``/``expected_output``/``context``/``retrieval_context``), the
``input``/``groundTruth``/``retrievalContext`` eval records, and the
``case_id``/``attack_type``/``expected{contains,excludes}``/``evidence_ids`` layout."""


@dataclass
class ImportResult:
    """The imported cases, and what the import could not place."""

    cases: list[DatasetCase] = field(default_factory=list)
    kept_in_meta: set[str] = field(default_factory=set)
    """Source fields no pair named (kept in ``meta``)."""
    located: int = 0
    """``evidence.text`` passages found in the corpus."""
    unlocated: int = 0
    """Passages kept in ``meta["reference_contexts"]``."""


def parse_maps(pairs: Sequence[str], preset: str | None = None) -> tuple[tuple[str, str], ...]:
    """The mapping: the ``--map SRC=DST`` pairs, then the preset's pairs whose source and
    destination no ``--map`` pair uses. ``InputError`` for a bad pair or preset."""
    if preset is not None and preset not in PRESETS:
        raise InputError(f"unknown preset {preset!r}; known: {', '.join(PRESETS)}", field="preset")
    user: list[tuple[str, str]] = []
    for pair in pairs:
        src, sep, dst = pair.partition("=")
        src, dst = src.strip(), dst.strip()
        if not sep or not src or not dst:
            raise InputError(f"--map takes SRC=DST, got {pair!r}", field="map")
        if dst not in DESTINATIONS and not (dst.startswith("meta.") and len(dst) > 5):
            raise InputError(
                f"--map {pair}: unknown destination {dst!r}; one of {', '.join(DESTINATIONS)}",
                field="map",
            )
        user.append((src, dst))
    taken_src = {s for s, _ in user}
    taken_dst = {d for _, d in user if d != "-" and not d.startswith("meta.")}
    rest = [
        (s, d)
        for s, d in PRESETS.get(preset or "", ())
        if s not in taken_src and d not in taken_dst
    ]
    return (*user, *rest)


def _get(obj: dict[str, Any], path: str) -> tuple[bool, Any]:
    value: Any = obj
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return False, None
        value = value[part]
    return True, value


def _leftovers(obj: dict[str, Any], used: set[str], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in obj.items():
        path = prefix + key
        if path in used:
            continue
        if isinstance(value, dict) and any(u.startswith(path + ".") for u in used):
            rest = _leftovers(value, used, path + ".")
            if rest:
                out[key] = rest
        else:
            out[key] = value
    return out


def _as_list(value: Any, src: str) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (str, int, float, bool)):
        return [value]
    if not isinstance(value, list):
        raise ValueError(f"{src}: expected a list or a string, got {type_name(value)}")
    return value


def _locate(text: str, documents: Sequence[Document]) -> dict[str, Any] | None:
    for doc in documents:
        start = doc.text.find(text)
        if start >= 0 and text:
            return {"doc_id": doc.id, "start": start, "end": start + len(text), "text": text}
    return None


def _build(
    obj: dict[str, Any],
    maps: Sequence[tuple[str, str]],
    documents: Sequence[Document] | None,
    result: ImportResult,
) -> dict[str, Any]:
    record: dict[str, Any] = {"expected": {}, "source": "imported"}
    meta: dict[str, Any] = {}
    used: set[str] = set()
    evidence: list[dict[str, Any]] = []
    for src, dst in maps:
        found, value = _get(obj, src)
        if not found:
            continue
        used.add(src)
        if dst == "-" or value is None:
            continue
        if dst.startswith("meta."):
            meta[dst[5:]] = value
        elif dst == "evidence":
            evidence += [{"doc_id": str(d)} for d in _as_list(value, src)]
        elif dst == "evidence.text":
            for text in _as_list(value, src):
                hit = _locate(str(text), documents) if documents else None
                if hit is None:
                    meta.setdefault("reference_contexts", []).append(text)
                    result.unlocated += 1
                else:
                    evidence.append(hit)
                    result.located += 1
        else:
            head, _, tail = dst.partition(".")
            target = record.setdefault(head, {}) if tail else record
            key = tail or head
            target[key] = _as_list(value, src) if dst in _LISTS else value
    if evidence:
        record["evidence"] = evidence
    leftovers = _leftovers(obj, used)
    result.kept_in_meta.update(leftovers)
    record["meta"] = {**leftovers, **meta}
    return record


def _finish(record: dict[str, Any]) -> dict[str, Any]:
    if record.get("input") is not None and record.get("id") in (None, ""):
        record["id"] = question_id(str(record["input"]))
    elif isinstance(record.get("id"), int):
        record["id"] = str(record["id"])
    mode = TYPE_MODES.get(str(record.get("type")))
    expected = record["expected"]
    if mode == "abstain":
        expected.setdefault("must_abstain", True)
    elif mode == "correct_premise":
        expected.setdefault("must_correct_premise", True)
    return record


def _source_field(err: InputError, maps: Sequence[tuple[str, str]]) -> str | None:
    """The source field behind a schema field (``expected.answers.0`` -> ``reference``)."""
    dotted = err.field or ""
    for src, dst in maps:
        if dotted == dst or dotted.startswith(dst + ".") or dst.startswith(dotted + "."):
            return src
    return err.field


def _cell(value: str) -> Any:
    text = value.strip()
    if not text:
        return None
    if text.startswith("["):
        try:
            return json.loads(text)
        except ValueError:
            try:
                return ast.literal_eval(text)
            except (ValueError, SyntaxError):
                return value
    return value


def _records(path: Path) -> Iterator[tuple[int, str, Any]]:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        fmt = "json" if suffix == ".json" else "jsonl"
        yield from iter_json_records(path, fmt, container_key="records")
        return
    if suffix != ".csv":
        raise InputError("import reads .jsonl, .json or .csv files", file=str(path))
    reader = csv.DictReader(io.StringIO(read_utf8(path)))
    for row in reader:
        line = reader.line_num
        yield line, "", {k: _cell(v) for k, v in row.items() if k and v is not None}


def import_records(
    path: str | Path,
    maps: Sequence[tuple[str, str]],
    *,
    documents: Sequence[Document] | None = None,
) -> ImportResult:
    """The cases of a foreign file under ``maps`` (module docstring). The first bad record
    raises ``InputError`` naming the file, line and source field."""
    path = Path(path)
    if not path.is_file():
        raise InputError("no such file", file=str(path))
    result = ImportResult()
    for line, label, obj in _records(path):
        if not isinstance(obj, dict):
            raise InputError(
                f"{label}expected an object, got {type_name(obj)}", file=str(path), line=line
            )
        try:
            record = _finish(_build(obj, maps, documents, result))
        except ValueError as exc:
            src = str(exc).split(":", 1)[0]
            raise InputError(f"{label}{exc}", file=str(path), line=line, field=src) from None
        if record.get("input") in (None, ""):
            sources = [s for s, d in maps if d == "input"] or ["input"]
            raise InputError(
                f"{label}no question: map the question field to input (--map FIELD=input)",
                file=str(path),
                line=line,
                field=" or ".join(sources),
            )
        try:
            result.cases.append(parse_case(record, file=str(path), line=line, label=label))
        except InputError as err:
            raise InputError(
                f"{err.reason} (schema field {err.field})",
                file=str(path),
                line=line,
                field=_source_field(err, maps),
            ) from None
    if not result.cases:
        raise InputError("the file has no records", file=str(path))
    return result

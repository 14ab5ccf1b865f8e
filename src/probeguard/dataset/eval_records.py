"""Evaluation datasets for ``probeguard eval``: CSV, XLSX, JSON and JSONL → ``EvalRecord``s.

A record's fields (names as RAGAS/DeepEval users write them):

==================  ========  ================================================================
``input``           required  the question (a non-empty string)
``answer``          optional  the answer to score; absent → the configured pipeline answers
``groundTruth``     optional  the reference answer (context recall, EM, F1, containment)
``retrievalContext`` optional  list of strings, rank 1 first; absent → the pipeline's
                              retrieved chunks (it is then called even when ``answer`` is
                              given)
``retrievalRelevance`` optional  list of booleans, one per context (reference relevance for
                              context precision); needs ``retrievalContext``
``tags``            optional  list of strings, or one comma-separated string
``id``              optional  a string or integer; default ``row-<n>`` (CSV/XLSX),
                              ``line-<n>`` (JSONL) or ``item-<n>`` (JSON, 1-based position)
==================  ========  ================================================================

Formats (``format=`` or the file suffix): ``.csv`` (a header row; list fields hold a JSON
list in the cell, ``tags`` may be comma-separated; an empty cell is an absent field),
``.xlsx`` (first sheet, the same layout as CSV; needs the ``xlsx`` extra), ``.json`` (a list
of objects or ``{"records": [...]}``) and ``.jsonl``. Any other field is an error (it is
usually a misspelt one).

Every problem raises ``InputError`` naming the file, the place — the 1-based data row for
CSV/XLSX (``row 3``; the CSV line is given too), the line for JSON/JSONL — and the field.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probeguard.core.errors import InputError, MissingExtraError
from probeguard.corpus.file_reading import (
    csv_error,
    csv_reader,
    iter_json_records,
    loads_json,
    read_utf8,
)
from probeguard.corpus.record_validation import record_id, type_name

__all__ = ["FIELDS", "FORMATS", "EvalRecord", "load_eval_records"]

FORMATS = ("csv", "xlsx", "json", "jsonl")
FIELDS = ("id", "input", "answer", "groundTruth", "retrievalContext", "retrievalRelevance", "tags")
_SUFFIXES = {".csv": "csv", ".xlsx": "xlsx", ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl"}


@dataclass(frozen=True)
class EvalRecord:
    """One record to score (fields in the module docstring)."""

    id: str
    input: str
    answer: str | None = None
    ground_truth: str | None = None
    retrieval_context: tuple[str, ...] | None = None
    retrieval_relevance: tuple[bool, ...] | None = None
    tags: tuple[str, ...] = ()
    source: str = ""
    """``<file>:row <n>`` or ``<file>:line <n>``."""


@dataclass(frozen=True)
class _Place:
    path: Path
    line: int | None
    label: str
    """Prefix of messages: ``"row 3: "`` for CSV/XLSX, ``""`` for JSONL (the line says it)."""
    default_id: str

    def error(self, message: str, field: str | None = None) -> InputError:
        return InputError(
            f"{self.label}{message}", file=str(self.path), line=self.line, field=field
        )


def _text(value: Any, place: _Place, field: str, *, required: bool, cells: bool) -> str | None:
    if value is None or (cells and isinstance(value, str) and not value.strip()):
        if required:
            raise place.error("missing (required)", field)
        return None
    if cells and isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)  # a spreadsheet number ("30") is text here
    if not isinstance(value, str):
        raise place.error(f"must be a string, got {type_name(value)}", field)
    if required and not value.strip():
        raise place.error("is empty", field)
    return value


def _json_cell(value: Any, place: _Place, field: str) -> Any:
    """A list field from a CSV/XLSX cell: the cell holds a JSON list."""
    if not isinstance(value, str):
        return value
    try:
        return loads_json(value)
    except ValueError as exc:
        raise place.error(
            f'expected a JSON list in the cell (e.g. ["first", "second"]), '
            f"got {value[:60]!r} ({exc})",
            field,
        ) from None


def _strings(value: Any, place: _Place, field: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise place.error(f"must be a list of strings, got {type_name(value)}", field)
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise place.error(f"item {i} must be a string, got {type_name(item)}", field)
    return tuple(value)


def _booleans(value: Any, place: _Place, field: str) -> tuple[bool, ...]:
    if not isinstance(value, list):
        raise place.error(f"must be a list of booleans, got {type_name(value)}", field)
    for i, item in enumerate(value):
        if not isinstance(item, bool):
            raise place.error(f"item {i} must be true or false, got {type_name(item)}", field)
    return tuple(value)


def _tags(value: Any, place: _Place, cells: bool) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        if cells and value.strip().startswith("["):
            value = _json_cell(value, place, "tags")
        else:
            return tuple(t.strip() for t in value.split(",") if t.strip())
    tags = _strings(value, place, "tags")
    return tuple(t.strip() for t in tags if t.strip())


def _record(obj: Any, place: _Place, *, cells: bool) -> EvalRecord:
    if not isinstance(obj, dict):
        raise place.error(f"expected an object, got {type_name(obj)}")
    if cells:
        obj = {
            k: v
            for k, v in obj.items()
            if not (v is None or (isinstance(v, str) and not v.strip()))
        }
    unknown = [k for k in obj if k not in FIELDS]
    if unknown:
        raise place.error(f"unknown field (expected some of {', '.join(FIELDS)})", unknown[0])
    rid = (
        record_id(obj["id"], path=place.path, line=place.line, label=place.label, field="id")
        if obj.get("id") not in (None, "")
        else place.default_id
    )
    question = _text(obj.get("input"), place, "input", required=True, cells=cells)
    answer = _text(obj.get("answer"), place, "answer", required=False, cells=cells)
    truth = _text(obj.get("groundTruth"), place, "groundTruth", required=False, cells=cells)
    contexts = relevance = None
    if obj.get("retrievalContext") is not None:
        raw = (
            _json_cell(obj["retrievalContext"], place, "retrievalContext")
            if cells
            else obj["retrievalContext"]
        )
        contexts = _strings(raw, place, "retrievalContext")
    if obj.get("retrievalRelevance") is not None:
        raw = (
            _json_cell(obj["retrievalRelevance"], place, "retrievalRelevance")
            if cells
            else obj["retrievalRelevance"]
        )
        relevance = _booleans(raw, place, "retrievalRelevance")
        if contexts is None:
            raise place.error(
                "given without retrievalContext (it labels those contexts)", "retrievalRelevance"
            )
        if len(relevance) != len(contexts):
            raise place.error(
                f"has {len(relevance)} labels for {len(contexts)} contexts (one per context)",
                "retrievalRelevance",
            )
    where = f"{place.path.name}:{place.label.rstrip(': ') or f'line {place.line}'}"
    return EvalRecord(
        id=rid,
        input=question or "",
        answer=answer,
        ground_truth=truth,
        retrieval_context=contexts,
        retrieval_relevance=relevance,
        tags=_tags(obj.get("tags"), place, cells),
        source=where,
    )


def _csv_rows(path: Path) -> Iterator[tuple[_Place, dict[str, Any]]]:
    text = read_utf8(path)
    reader = csv_reader(text)
    try:
        header = next(reader)
    except StopIteration:
        raise InputError("empty file: expected a header row", file=str(path), line=1) from None
    except csv.Error as exc:
        raise csv_error(exc, path, 1) from None
    header = _header(header, path, line=1)
    row = 0
    while True:
        start = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise csv_error(exc, path, start) from None
        if not any(c.strip() for c in cells):
            continue
        row += 1
        place = _Place(path, start, f"row {row}: ", f"row-{row}")
        if len(cells) > len(header):
            raise place.error(f"{len(cells)} cells but the header names {len(header)} columns")
        yield place, dict(zip(header, cells))


def _header(names: list[Any], path: Path, line: int | None) -> list[str]:
    out = [str(n).strip() if n is not None else "" for n in names]
    while out and not out[-1]:
        out.pop()
    for i, name in enumerate(out):
        if not name:
            raise InputError(f"column {i + 1} of the header has no name", file=str(path), line=line)
        if out.count(name) > 1:
            raise InputError(
                f"column '{name}' appears more than once in the header",
                file=str(path),
                line=line,
                field=name,
            )
    if "input" not in out:
        raise InputError(
            "the header has no 'input' column", file=str(path), line=line, field="input"
        )
    return out


def _open_workbook(path: Path, *, data_only: bool) -> Any:
    try:
        import openpyxl
    except ImportError:
        raise MissingExtraError("xlsx", "openpyxl", hint="needed to read .xlsx datasets") from None
    try:
        return openpyxl.load_workbook(path, read_only=True, data_only=data_only)
    except Exception as exc:  # openpyxl raises many kinds for a file that is not a workbook
        raise InputError(f"cannot read the workbook: {exc}", file=str(path)) from None


def _check_cached(
    cells: tuple[Any, ...], formulas: tuple[Any, ...], header: list[str], place: _Place
) -> None:
    """A formula cell read without its cached value (a workbook written by a library, never
    recalculated by a spreadsheet program) reads as empty: say so instead of treating the
    field as absent."""
    for i, name in enumerate(header):
        value = cells[i] if i < len(cells) else None
        formula = formulas[i] if i < len(formulas) else None
        if value is None and isinstance(formula, str) and formula.startswith("="):
            raise place.error(
                f"the cell holds the formula {formula[:40]!r} without a saved value; open and "
                "save the workbook in a spreadsheet program (or paste values)",
                name,
            )


def _xlsx_rows(path: Path) -> Iterator[tuple[_Place, dict[str, Any]]]:
    book = _open_workbook(path, data_only=True)
    formula_book = _open_workbook(path, data_only=False)
    try:
        rows = book.worksheets[0].iter_rows(values_only=True)
        formula_rows = formula_book.worksheets[0].iter_rows(values_only=True)
        header_cells = next(rows, None)
        next(formula_rows, None)
        if header_cells is None:
            raise InputError("empty sheet: expected a header row", file=str(path))
        header = _header(list(header_cells), path, line=None)
        row = 0
        for sheet_row, cells in enumerate(rows, start=2):
            formulas = next(formula_rows, ())
            if not any(c is not None and str(c).strip() for c in cells) and not any(
                isinstance(f, str) and f.startswith("=") for f in formulas
            ):
                continue
            row += 1
            place = _Place(path, None, f"row {row} (sheet row {sheet_row}): ", f"row-{row}")
            _check_cached(cells, formulas, header, place)
            extra = [c for c in cells[len(header) :] if c is not None and str(c).strip()]
            if extra:
                raise place.error(f"a cell beyond the {len(header)} named columns")
            yield place, dict(zip(header, cells))
    finally:
        book.close()
        formula_book.close()


def _json_rows(path: Path, fmt: str) -> Iterator[tuple[_Place, Any]]:
    """JSONL records default to ``line-<n>``; JSON list items to ``item-<i>`` (1-based
    position), since several items may share a line (a minified file)."""
    records = iter_json_records(path, fmt, container_key="records")
    for i, (line, label, value) in enumerate(records, start=1):
        yield _Place(path, line, label, f"line-{line}" if fmt == "jsonl" else f"item-{i}"), value


def load_eval_records(path: str | Path, *, format: str | None = None) -> list[EvalRecord]:
    """The records of a CSV, XLSX, JSON or JSONL dataset, in file order (rules in the module
    docstring). Raises ``InputError`` for a bad record, a duplicate id or an empty dataset."""
    path = Path(path)
    fmt = format or _SUFFIXES.get(path.suffix.lower())
    if fmt not in FORMATS:
        raise InputError(
            f"unknown dataset format {path.suffix or format!r}: use one of "
            f".csv, .xlsx, .json, .jsonl (or give format=)",
            file=str(path),
        )
    if not path.is_file():
        raise InputError("no such file", file=str(path))
    cells = fmt in ("csv", "xlsx")
    rows = (
        _csv_rows(path)
        if fmt == "csv"
        else _xlsx_rows(path)
        if fmt == "xlsx"
        else _json_rows(path, fmt)
    )
    records: list[EvalRecord] = []
    seen: dict[str, str] = {}
    for place, obj in rows:
        record = _record(obj, place, cells=cells)
        if record.id in seen:
            raise place.error(f"duplicate id {record.id!r} (first at {seen[record.id]})", "id")
        seen[record.id] = record.source
        records.append(record)
    if not records:
        raise InputError("the dataset has no records", file=str(path))
    return records

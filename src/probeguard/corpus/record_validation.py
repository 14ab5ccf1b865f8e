"""Validating one record: a JSON object (or CSV row) → a ``Document``, and the duplicate-id
check across a file (the record format is in ``probeguard.corpus.loaders``). Every problem
raises ``InputError`` naming the file, line and field; ``where``, ``type_name`` and
``record_id`` are shared with the question and dataset loaders for the same messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from probeguard.core.documents import Document
from probeguard.core.errors import InputError
from probeguard.core.hashing import canonical_json

__all__ = [
    "DocumentFields",
    "DuplicateIdCheck",
    "document_from_record",
    "record_id",
    "type_name",
    "where",
]


def where(label: str, line: int | None) -> str:
    """How a duplicate message names a record's place: ``line 3`` or ``line 3 (item [1])``."""
    place = f"line {line}" if line is not None else "unknown line"
    return f"{place} ({label.rstrip(': ')})" if label else place


def type_name(value: Any) -> str:
    """JSON-ish type name for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def record_id(value: Any, *, path: Path, line: int | None, label: str, field: str) -> str:
    """A record id: a non-empty string, or an integer (converted with ``str``)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise InputError(
            f"{label}must be a string, got {type_name(value)}",
            file=str(path),
            line=line,
            field=field,
        )
    if not value.strip():
        raise InputError(f"{label}is empty", file=str(path), line=line, field=field)
    return value


class DocumentFields:
    """The names of a record's text, id and title fields (each different from "metadata")."""

    def __init__(self, text: str, id: str, title: str) -> None:
        if len({text, id, title, "metadata"}) != 4:
            raise ValueError("text_field, id_field, title_field and 'metadata' must differ")
        self.text, self.id, self.title = text, id, title


def document_from_record(
    obj: Any,
    *,
    path: Path,
    line: int | None,
    label: str,
    fields: DocumentFields,
    source: str,
) -> Document:
    """The document of one record (a JSON object, or a CSV row as one); ``label`` opens each
    message, naming the record's place within the file."""
    file = str(path)
    if not isinstance(obj, dict):
        raise InputError(
            f"{label}expected a JSON object, got {type_name(obj)}", file=file, line=line
        )
    if fields.text not in obj or obj[fields.text] is None:
        raise InputError(f"{label}missing document text", file=file, line=line, field=fields.text)
    text = obj[fields.text]
    if not isinstance(text, str):
        raise InputError(
            f"{label}must be a string, got {type_name(text)}",
            file=file,
            line=line,
            field=fields.text,
        )
    if not text.strip():
        raise InputError(f"{label}is empty", file=file, line=line, field=fields.text)
    doc_id: str | None = None
    if obj.get(fields.id) not in (None, ""):
        doc_id = record_id(obj[fields.id], path=path, line=line, label=label, field=fields.id)
    title = obj.get(fields.title)
    if title is None:
        title = ""
    elif not isinstance(title, str):
        raise InputError(
            f"{label}must be a string, got {type_name(title)}",
            file=file,
            line=line,
            field=fields.title,
        )
    metadata = obj.get("metadata")
    if metadata is None:
        metadata = {}
    elif not isinstance(metadata, dict):
        raise InputError(
            f"{label}must be an object, got {type_name(metadata)}",
            file=file,
            line=line,
            field="metadata",
        )
    else:
        metadata = dict(metadata)
    for key, value in obj.items():
        if key in (fields.text, fields.id, fields.title, "metadata"):
            continue
        if key in metadata:
            raise InputError(
                f"{label}'{key}' is both a top-level field and a metadata key",
                file=file,
                line=line,
                field=key,
            )
        metadata[key] = value
    _check_json_values(metadata, path=path, line=line, label=label)
    return Document.create(text, id=doc_id, title=title, metadata=metadata, source=source)


def _check_json_values(
    metadata: dict[str, Any], *, path: Path, line: int | None, label: str
) -> None:
    try:
        canonical_json(metadata)
    except (TypeError, ValueError) as exc:
        raise InputError(
            f"{label}not JSON-serialisable: {exc}", file=str(path), line=line, field="metadata"
        ) from exc


class DuplicateIdCheck:
    """Duplicate-id check that names both places."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where: dict[str, str] = {}

    def add(self, doc_id: str, *, explicit: bool, line: int | None, here: str, field: str) -> None:
        if doc_id in self.where:
            what = (
                f"duplicate id '{doc_id}'"
                if explicit
                else f"duplicate document (same title and text, content id '{doc_id}')"
            )
            raise InputError(
                f"{what}: first at {self.where[doc_id]}, again at {here}",
                file=str(self.path),
                line=line,
                field=field,
            )
        self.where[doc_id] = here

"""Corpus loaders: JSONL, JSON, CSV, or a folder of text/markdown files → ``list[Document]``.

Formats (``format=`` or detected from the path):

- ``jsonl`` (``.jsonl``, ``.ndjson``): one JSON object a line; blank lines are skipped.
- ``json`` (``.json``): a list of objects, or ``{"documents": [...]}``.
- ``csv`` (``.csv``): a header row; columns ``id``, ``title``, ``text``; other columns go
  into ``metadata`` as strings.
- ``dir`` (a folder): every ``.txt``/``.md``/``.markdown`` file below it, recursively, in
  sorted order of their relative paths, skipping hidden files and folders. The id is the
  relative path without its suffix, the title the first ATX markdown heading (``# ...``,
  outside code fences) or else the file stem, the source the relative path.

A record is ``{id, title, text, metadata}``: ``text`` is required (a non-empty string), ``id``
optional (a string or integer; without one the document gets a content id, see
``Document.create``), ``title`` an optional string, ``metadata`` an optional object. Other
keys of a JSON record are added to ``metadata``. The field names can be changed with
``text_field``, ``id_field`` and ``title_field``. ``id_field`` left as None means ``id``,
optional; but a record without ``id`` that has an id-like field (``ID_LIKE``: ``doc_id``,
``_id``, ...) is an error naming that field, not a silent content id. ``id_field`` given
explicitly: every record must have it.

Every problem raises ``InputError`` naming the file, the 1-based line (for a JSON file, the
line where the item starts) and the field: malformed JSON, a missing, empty or non-string
text, metadata that is not an object, duplicate ids (both lines named), an empty corpus,
bytes that are not UTF-8. Documents keep file order; a JSONL or JSON document's ``source`` is
``"<file>:<line>"``.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any

from probeguard.core.documents import Document
from probeguard.core.errors import InputError
from probeguard.corpus.file_reading import iter_json_records, read_utf8
from probeguard.corpus.record_validation import (
    DocumentFields,
    DuplicateIdCheck,
    document_from_record,
    where,
)

__all__ = ["FORMATS", "ID_LIKE", "detect_format", "load_corpus", "markdown_title"]

FORMATS = ("jsonl", "json", "csv", "dir")
_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv"}
_TEXT_SUFFIXES = (".txt", ".md", ".markdown")


ID_LIKE = ("doc_id", "docid", "docId", "document_id", "documentId", "_id", "uuid", "guid")
"""Field names that hold an id: found without ``id`` (and no ``id_field``), they are an error."""


def _check_id_field(
    keys: Any, fields: DocumentFields, explicit: bool, *, file: str, line: int | None, label: str
) -> None:
    """An explicit ``id_field`` missing from a record, or an id-like field beside a missing
    default ``id``, raises ``InputError`` naming the field (module docstring)."""
    if fields.id in keys:
        return
    if explicit:
        raise InputError(
            f"{label}missing id field '{fields.id}' (the corpus's id_field)",
            file=file,
            line=line,
            field=fields.id,
        )
    like = [k for k in ID_LIKE if k in keys]
    if like:
        raise InputError(
            f"{label}no '{fields.id}' field, but '{like[0]}' looks like the id: set the "
            f"corpus's id_field to '{like[0]}' (--id-field), or the documents get content ids",
            file=file,
            line=line,
            field=like[0],
        )


def _load_json_like(
    path: Path, fmt: str, fields: DocumentFields, explicit_id: bool = False
) -> list[Document]:
    docs: list[Document] = []
    seen = DuplicateIdCheck(path)
    for line, label, obj in iter_json_records(path, fmt, container_key="documents"):
        doc = document_from_record(
            obj, path=path, line=line, label=label, fields=fields, source=f"{path}:{line}"
        )
        _check_id_field(obj, fields, explicit_id, file=str(path), line=line, label=label)
        explicit = isinstance(obj, dict) and obj.get(fields.id) not in (None, "")
        seen.add(doc.id, explicit=explicit, line=line, here=where(label, line), field=fields.id)
        docs.append(doc)
    return docs


def _load_csv(path: Path, fields: DocumentFields, explicit_id: bool = False) -> list[Document]:
    text = read_utf8(path)
    reader = csv.reader(io.StringIO(text, newline=""))
    file = str(path)
    try:
        header = next(reader)
    except StopIteration:
        raise InputError("the CSV file is empty (no header row)", file=file, line=1) from None
    except csv.Error as exc:
        raise InputError(f"malformed CSV: {exc}", file=file, line=1) from exc
    header = [h.strip() for h in header]
    if fields.text not in header:
        raise InputError(
            f"no '{fields.text}' column; the header has: {', '.join(header)}",
            file=file,
            line=1,
            field=fields.text,
        )
    _check_id_field(header, fields, explicit_id, file=file, line=1, label="header: ")
    dupes = sorted({h for h in header if header.count(h) > 1})
    if dupes:
        raise InputError(
            f"duplicate column(s) in the header: {', '.join(dupes)}",
            file=file,
            line=1,
            field=dupes[0],
        )
    docs: list[Document] = []
    seen = DuplicateIdCheck(path)
    line = reader.line_num + 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise InputError(f"malformed CSV: {exc}", file=file, line=line) from exc
        start, line = line, reader.line_num + 1
        if not row or not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise InputError(
                f"the row has {len(row)} fields but the header has {len(header)}",
                file=file,
                line=start,
            )
        record = dict(zip(header, row))
        obj: dict[str, Any] = {fields.text: record.pop(fields.text)}
        if fields.id in record:
            obj[fields.id] = record.pop(fields.id)
        if fields.title in record:
            obj[fields.title] = record.pop(fields.title)
        obj["metadata"] = record
        doc = document_from_record(
            obj, path=path, line=start, label="", fields=fields, source=f"{path}:{start}"
        )
        seen.add(
            doc.id,
            explicit=bool(obj.get(fields.id)),
            line=start,
            here=f"line {start}",
            field=fields.id,
        )
        docs.append(doc)
    return docs


_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_ATX = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")


def markdown_title(text: str) -> str | None:
    """The first ATX heading (``# Title``) outside fenced code blocks, or ``None``."""
    fenced = False
    for raw in text.split("\n"):
        if _FENCE.match(raw):
            fenced = not fenced
            continue
        if not fenced:
            m = _ATX.match(raw)
            if m:
                return m.group(1).strip()
    return None


def _load_dir(root: Path) -> list[Document]:
    files = sorted(
        (
            p
            for p in root.rglob("*")
            if p.suffix.lower() in _TEXT_SUFFIXES
            and p.is_file()
            and not any(part.startswith(".") for part in p.relative_to(root).parts)
        ),
        key=lambda p: p.relative_to(root).as_posix(),
    )
    docs: list[Document] = []
    seen: dict[str, str] = {}
    for path in files:
        rel = path.relative_to(root).as_posix()
        doc_id = rel[: -len(path.suffix)]
        text = read_utf8(path)
        if not text.strip():
            raise InputError("the file is empty", file=str(path), field="text")
        if doc_id in seen:
            raise InputError(
                f"duplicate id '{doc_id}': files {seen[doc_id]} and {rel}",
                file=str(path),
                field="id",
            )
        seen[doc_id] = rel
        title = markdown_title(text) if path.suffix.lower() in (".md", ".markdown") else None
        docs.append(Document.create(text, id=doc_id, title=title or path.stem, source=rel))
    return docs


def detect_format(path: Path) -> str:
    """``dir`` for a folder, else by suffix (``.jsonl``/``.ndjson``, ``.json``, ``.csv``)."""
    if path.is_dir():
        return "dir"
    fmt = _SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        raise InputError(
            f"cannot tell the corpus format from the suffix "
            f"'{path.suffix}'; pass format= one of {', '.join(FORMATS)}",
            file=str(path),
        )
    return fmt


def load_corpus(
    path: str | Path,
    *,
    format: str | None = None,
    text_field: str = "text",
    id_field: str | None = None,
    title_field: str = "title",
) -> list[Document]:
    """Load a corpus (see the module docstring for formats and errors); documents keep the
    order of the file (or of the sorted relative paths, for a folder)."""
    path = Path(path)
    if not path.exists():
        raise InputError("no such file or folder", file=str(path))
    fmt = format or detect_format(path)
    if fmt not in FORMATS:
        raise InputError(
            f"unknown corpus format '{fmt}'; known: {', '.join(FORMATS)}", file=str(path)
        )
    if (fmt == "dir") != path.is_dir():
        raise InputError(
            f"format '{fmt}' needs a {'folder' if fmt == 'dir' else 'file'}", file=str(path)
        )
    fields = DocumentFields(text_field, id_field or "id", title_field)
    if fmt == "dir":
        docs = _load_dir(path)
    elif fmt == "csv":
        docs = _load_csv(path, fields, id_field is not None)
    else:
        docs = _load_json_like(path, fmt, fields, id_field is not None)
    if not docs:
        raise InputError("the corpus has no documents", file=str(path))
    return docs

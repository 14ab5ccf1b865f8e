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
``text_field``, ``id_field`` and ``title_field``.

Every problem raises ``InputError`` naming the file, the 1-based line (for a JSON file, the
line where the item starts) and the field: malformed JSON, a missing, empty or non-string
text, metadata that is not an object, duplicate ids (both lines named), an empty corpus,
bytes that are not UTF-8. Documents keep file order; a JSONL or JSON document's ``source`` is
``"<file>:<line>"``.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from probeguard.core.documents import Document
from probeguard.core.errors import InputError
from probeguard.core.hashing import canonical_json
from probeguard.core.io import atomic_write_text

FORMATS = ("jsonl", "json", "csv", "dir")
_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv"}
_TEXT_SUFFIXES = (".txt", ".md", ".markdown")


# --------------------------------------------------------------------------- shared readers


def read_utf8(path: Path) -> str:
    """The file's text (UTF-8, a leading BOM dropped, newlines as read); undecodable bytes
    raise ``InputError`` with the line they are on."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", file=str(path)) from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset "
            f"{exc.start}); save the file as UTF-8",
            file=str(path),
            line=line,
        ) from exc
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _loads(text: str) -> Any:
    return json.loads(text, parse_constant=_reject_constant)


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _json_error(exc: Exception, path: Path, line: int | None, base_line: int = 1) -> InputError:
    if isinstance(exc, json.JSONDecodeError):
        return InputError(
            f"malformed JSON: {exc.msg} (column {exc.colno})",
            file=str(path),
            line=base_line + exc.lineno - 1 if line is None else line,
        )
    return InputError(f"malformed JSON: {exc}", file=str(path), line=line)


def iter_json_records(
    path: Path, fmt: str, *, container_key: str
) -> Iterator[tuple[int, str, Any]]:
    """Yield ``(line, label, value)`` for each record of a JSONL or JSON file. ``label`` is
    how a message names the record: ``""`` for JSONL (the line says it all), ``"item [i]: "``
    (or ``"item documents[i]: "``) for a JSON file. A JSON file may be a list or ``{container_key: [...]}``; the line of
    each list item is found by decoding the items one by one."""
    text = read_utf8(path)
    if fmt == "jsonl":
        for number, raw in enumerate(text.split("\n"), start=1):
            if not raw.strip():
                continue
            try:
                value = _loads(raw)
            except ValueError as exc:
                raise _json_error(exc, path, number) from exc
            yield number, "", value
        return
    try:
        top = _loads(text)
    except ValueError as exc:
        raise _json_error(exc, path, None) from exc
    if isinstance(top, dict) and isinstance(top.get(container_key), list):
        items = top[container_key]
        array_at = _find_key_array(text, container_key)
        prefix = container_key
    elif isinstance(top, list):
        items = top
        array_at = text.index("[")
        prefix = ""
    else:
        raise InputError(
            f'expected a JSON list of objects or {{"{container_key}": [...]}}, '
            f"got {type(top).__name__}",
            file=str(path),
            line=1,
        )
    lines = _item_lines(text, array_at, len(items))
    for i, value in enumerate(items):
        yield lines[i], f"item {prefix}[{i}]: ", value


_WS = re.compile(r"[ \t\n\r]*")


def _skip_ws(text: str, pos: int) -> int:
    """Offset of the first non-whitespace character at or after ``pos``."""
    match = _WS.match(text, pos)  # `[ \t\n\r]*` matches anywhere, if only the empty string
    return match.end() if match else pos


def _find_key_array(text: str, key: str) -> int:
    """Offset of the ``[`` that opens ``key``'s value in a top-level JSON object."""
    dec = json.JSONDecoder()
    found = -1
    pos = _skip_ws(text, text.index("{") + 1)
    while pos < len(text) and text[pos] != "}":
        name, pos = dec.raw_decode(text, pos)
        pos = _skip_ws(text, pos) + 1  # past ':'
        pos = _skip_ws(text, pos)
        if name == key and text[pos] == "[":
            found = pos  # the last duplicate key wins, as in json.loads
        _, pos = dec.raw_decode(text, pos)
        pos = _skip_ws(text, pos)
        if pos < len(text) and text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
    return found


def _item_lines(text: str, array_at: int, count: int) -> list[int]:
    """1-based line where each of the ``count`` items of the array at ``array_at`` starts."""
    dec = json.JSONDecoder()
    lines: list[int] = []
    pos = _skip_ws(text, array_at + 1)
    line, last = 1 + text.count("\n", 0, pos), pos
    for _ in range(count):
        line += text.count("\n", last, pos)
        last = pos
        lines.append(line)
        _, pos = dec.raw_decode(text, pos)
        pos = _skip_ws(text, pos)
        if pos < len(text) and text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
    return lines


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


# --------------------------------------------------------------------------- records


class _Fields:
    def __init__(self, text: str, id: str, title: str) -> None:
        if len({text, id, title, "metadata"}) != 4:
            raise ValueError("text_field, id_field, title_field and 'metadata' must differ")
        self.text, self.id, self.title = text, id, title


def _document(
    obj: Any,
    *,
    path: Path,
    line: int | None,
    label: str,
    fields: _Fields,
    source: str,
    extra_as_strings: bool = False,
) -> Document:
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


class _Seen:
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


# --------------------------------------------------------------------------- formats


def _load_json_like(path: Path, fmt: str, fields: _Fields) -> list[Document]:
    docs: list[Document] = []
    seen = _Seen(path)
    for line, label, obj in iter_json_records(path, fmt, container_key="documents"):
        doc = _document(
            obj, path=path, line=line, label=label, fields=fields, source=f"{path}:{line}"
        )
        explicit = isinstance(obj, dict) and obj.get(fields.id) not in (None, "")
        seen.add(doc.id, explicit=explicit, line=line, here=where(label, line), field=fields.id)
        docs.append(doc)
    return docs


def _load_csv(path: Path, fields: _Fields) -> list[Document]:
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
    dupes = sorted({h for h in header if header.count(h) > 1})
    if dupes:
        raise InputError(
            f"duplicate column(s) in the header: {', '.join(dupes)}",
            file=file,
            line=1,
            field=dupes[0],
        )
    docs: list[Document] = []
    seen = _Seen(path)
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
        doc = _document(
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
    id_field: str = "id",
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
    fields = _Fields(text_field, id_field, title_field)
    if fmt == "dir":
        docs = _load_dir(path)
    elif fmt == "csv":
        docs = _load_csv(path, fields)
    else:
        docs = _load_json_like(path, fmt, fields)
    if not docs:
        raise InputError("the corpus has no documents", file=str(path))
    return docs


# --------------------------------------------------------------------------- writing


def document_record(doc: Document) -> dict[str, Any]:
    """The JSONL record of a document (``source`` is not written: it is not content)."""
    return {"id": doc.id, "title": doc.title, "text": doc.text, "metadata": doc.metadata}


def write_jsonl_atomic(records: Iterable[dict[str, Any]], path: str | Path) -> Path:
    """Write records as JSONL (sorted keys, UTF-8, ``\\n`` line ends) to a temporary file in
    the target folder, then ``os.replace`` it into place: readers never see a partial file.
    Same records → same bytes."""
    lines = [
        json.dumps(record, ensure_ascii=False, sort_keys=True, allow_nan=False) + "\n"
        for record in records
    ]
    return atomic_write_text(path, "".join(lines))


def documents_to_jsonl(docs: Iterable[Document], path: str | Path) -> Path:
    """Write documents as JSONL that ``load_corpus`` reads back to equal documents
    (same ids, titles, texts and metadata); written atomically."""
    return write_jsonl_atomic((document_record(d) for d in docs), path)


__all__ = [
    "FORMATS",
    "detect_format",
    "documents_to_jsonl",
    "load_corpus",
    "markdown_title",
    "write_jsonl_atomic",
]

"""Reading user files: UTF-8 text (an undecodable byte named by its line), and the records of
a JSON or JSONL file, each with the line it starts on, for the corpus, question and dataset
loaders. Malformed JSON raises ``InputError`` naming the file and line."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from probeguard.core.errors import InputError

__all__ = ["csv_error", "csv_reader", "decode_utf8", "iter_json_records", "loads_json", "read_utf8"]


def read_utf8(path: Path) -> str:
    """The file's text (UTF-8, a leading BOM dropped, "\\r\\n" and "\\r" read as "\\n"); undecodable bytes
    raise ``InputError`` with the line they are on."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", file=str(path)) from exc
    return decode_utf8(data, path)


def decode_utf8(data: bytes, path: Path) -> str:
    """``data`` (the bytes of ``path``) decoded as ``read_utf8`` says."""
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


def csv_reader(text: str) -> Any:
    """A strict ``csv.reader`` over ``text``: a quoted field left open at the end of the file
    or a stray character after a closing quote is a ``csv.Error`` (the lenient default
    silently swallows the rest of the file into one cell)."""
    return csv.reader(io.StringIO(text, newline=""), strict=True)


def csv_error(exc: csv.Error, path: Path, line: int) -> InputError:
    """``InputError`` for a malformed CSV row starting on ``line``."""
    reason = str(exc)
    if "unexpected end of data" in reason:
        reason = "a quoted field that starts in this row is never closed"
    return InputError(f"malformed CSV: {reason}", file=str(path), line=line)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def loads_json(text: str) -> Any:
    """``json.loads`` that rejects NaN/Infinity and turns nesting deeper than the
    interpreter's recursion limit (a ``RecursionError``) into a ``ValueError``."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise ValueError("the JSON is nested too deeply") from None


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
    (or ``"item documents[i]: "``) for a JSON file. A JSON file may be a list or
    ``{container_key: [...]}``; the line of each list item is found by decoding the items one
    by one."""
    text = read_utf8(path)
    if fmt == "jsonl":
        for number, raw in enumerate(text.split("\n"), start=1):
            if not raw.strip():
                continue
            try:
                value = loads_json(raw)
            except ValueError as exc:
                raise _json_error(exc, path, number) from exc
            yield number, "", value
        return
    try:
        top = loads_json(text)
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

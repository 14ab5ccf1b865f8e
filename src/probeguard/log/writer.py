"""Streaming writer for ``run.jsonl``, with resume.

The file holds one JSON object a line: a ``RunHeader`` first, then one ``CaseRecord`` per
finished case, appended (and flushed) the moment the case finishes, so a crash loses at most
the line being written. Reading tolerates exactly that: a last line that does not parse (a
crash mid-write) is dropped, and when resuming the file is truncated back to the last
complete line before anything is appended. A bad line anywhere else is an ``InputError``
naming the file and line.

A case id may appear on more than one line (a resumed run re-runs the cases that failed or
whose call changed): the later line supersedes the earlier. ``RunLogWriter.finished()``
applies that rule; ``read_run_jsonl`` returns every line in file order.

Non-finite floats: pydantic's ``model_dump_json`` writes NaN and ±inf as ``null``, which does
not read back into a ``float`` field (``duration_s``) and silently turns a NaN metric into
``None``. Lines are therefore written with ``NaN``/``Infinity``/``-Infinity`` tokens (what
Python's ``json`` module and pydantic's JSON parser read and write), so every record
round-trips exactly. Finite floats are rounded to 10 significant digits
(``core.floats.normalise_floats``), so identical runs write identical lines.
Values of free-form ``metadata``/``meta`` fields that JSON cannot hold (a numpy scalar or
array) are converted with ``.tolist()``, anything else with ``str()``.

The runner keeps each record as its line reads back (``logged_with_line``); where that is
surely the record itself up to rounded floats (``log.reuse``), the line is not parsed back.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import IO, Any

import pydantic_core
from pydantic import BaseModel, ValidationError

from probeguard.core.errors import InputError
from probeguard.core.floats import normalise_floats, normalise_floats_in_place
from probeguard.core.records import CaseRecord, RunHeader
from probeguard.log.reuse import NotReusable, reuse

__all__ = ["RunLogWriter", "as_logged", "logged_with_line", "read_run_jsonl", "dump_json_line"]


def _fallback(value: Any) -> Any:
    """JSON for what pydantic cannot write, floats normalised like the rest, so that a line
    reads back to values whose line is the same line (``logged_with_line``)."""
    tolist = getattr(value, "tolist", None)  # numpy scalars and arrays
    if callable(tolist):
        return normalise_floats(tolist())
    if isinstance(value, (set, frozenset)):
        return normalise_floats(sorted(value, key=str))
    return str(value)


def dump_json_line(model: BaseModel) -> str:
    """One-line JSON of ``model`` that round-trips NaN and ±inf (see the module docstring)."""
    return _to_json(normalise_floats_in_place(model.model_dump(mode="python")))  # fresh tree


def _to_json(tree: Any) -> str:
    """The line of a dumped tree whose floats are rounded."""
    return pydantic_core.to_json(tree, inf_nan_mode="constants", fallback=_fallback).decode("utf-8")


def as_logged(record: CaseRecord) -> CaseRecord:
    """``record`` as its ``run.jsonl`` line reads back (floats normalised): what a resumed
    run, or a run served from the cache, sees, so that every run scores the same values."""
    return logged_with_line(record)[0]


def logged_with_line(record: CaseRecord) -> tuple[CaseRecord, str]:
    """``(as_logged(record), its run.jsonl line)`` from one serialisation; the line is also
    the line of the logged record (serialising reads back to the same values). The logged
    record is ``log.reuse.reuse``'s: the record itself, or a copy with its floats rounded,
    sharing the unchanged parts, when that is surely what the line reads back as; else the
    line parsed by pydantic's JSON validator (the same record as ``json.loads`` +
    ``model_validate``, NaN and ±inf tokens included, in ~40% of the time)."""
    tree = record.model_dump(mode="python")  # a fresh tree: rounded in place
    try:
        logged: CaseRecord | None = reuse(record, tree)
    except NotReusable:
        logged = None
        normalise_floats_in_place(tree)  # finishes what the walk had rounded
    line = _to_json(tree)
    return (CaseRecord.model_validate_json(line) if logged is None else logged), line


def _parse_lines(path: Path, data: bytes) -> tuple[RunHeader | None, list[CaseRecord], int]:
    """Parse ``run.jsonl`` bytes. Returns the header (None for an empty file, or one whose
    only line is a truncated header), the records, and the byte length of the valid prefix
    (everything before a dropped truncated last line)."""
    header: RunHeader | None = None
    records: list[CaseRecord] = []
    lines = data.split(b"\n")
    last = max((i for i, raw in enumerate(lines) if raw.strip()), default=-1)
    offset = 0
    valid_end = 0
    for i, raw in enumerate(lines):
        end = offset + len(raw) + (1 if i < len(lines) - 1 else 0)
        if raw.strip():
            try:
                obj = json.loads(raw)
            except (ValueError, RecursionError) as exc:
                if i == last:
                    break  # a crash while writing the last line: drop it
                reason = "nested too deeply" if isinstance(exc, RecursionError) else exc
                raise InputError(
                    f"this line is not JSON: {reason}", file=str(path), line=i + 1
                ) from None
            try:
                if header is None:
                    if not isinstance(obj, dict) or obj.get("kind") != "header":
                        raise InputError(
                            "the first line is not a run header (kind 'header'); "
                            "is this a ProbeGuard run.jsonl?",
                            file=str(path),
                            line=i + 1,
                            field="kind",
                        )
                    header = RunHeader.model_validate(obj)
                else:
                    records.append(CaseRecord.model_validate(obj))
            except ValidationError as exc:
                if i == last:
                    break  # valid JSON cut short (e.g. a number prefix): drop it
                err = exc.errors()[0]
                more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
                raise InputError(
                    f"this line is not a valid {'record' if header else 'run header'}: "
                    f"{err['msg']}{more}",
                    file=str(path),
                    line=i + 1,
                    field=".".join(str(p) for p in err["loc"]) or None,
                ) from None
        offset = valid_end = end
    return header, records, valid_end


def read_run_jsonl(path: str | os.PathLike[str]) -> tuple[RunHeader, list[CaseRecord]]:
    """The header and every record of ``run.jsonl``, in file order (a truncated last line,
    from a crash, is dropped). Raises ``InputError`` for a missing header or a bad line."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise InputError("run log not found", file=str(p)) from None
    except OSError as exc:
        raise InputError(f"cannot read the run log: {exc.strerror or exc}", file=str(p)) from None
    header, records, _ = _parse_lines(p, data)
    if header is None:
        raise InputError("the run log is empty (no header line)", file=str(p), line=1)
    return header, records


class RunLogWriter:
    """Appends case records to ``run.jsonl`` as they finish.

    ``resume=True`` and an existing file: the file is read (see the module docstring), its
    header must carry the same ``pipeline_fingerprint`` (and, when both are set, the same
    ``corpus_fingerprint``) as ``header`` or ``InputError`` is raised, and new records are
    appended after the existing ones; the existing header line is kept. Otherwise the file
    is (re)created with ``header`` as its first line.

    ``append`` writes one line and flushes it (``fsync=True`` also forces it to disk, at a
    cost of a disk sync per case). It holds a lock, so calls from the event loop and from
    worker threads never interleave their lines.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        header: RunHeader,
        *,
        resume: bool = False,
        fsync: bool = False,
    ) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self._lock = threading.Lock()
        self._finished: dict[str, CaseRecord] = {}
        self.resumed_lines = 0
        try:
            self._open(header, resume)
        except OSError as exc:
            raise InputError(
                f"cannot write the run log: {exc.strerror or exc}", file=str(self.path)
            ) from None

    def _open(self, header: RunHeader, resume: bool) -> None:
        """Read an existing log (``resume``) and open the file for appending, or create it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        existing: RunHeader | None = None
        valid_end = 0
        if resume and self.path.exists():
            data = self.path.read_bytes()
            existing, records, valid_end = _parse_lines(self.path, data)
            if existing is not None:
                self._check_same_run(existing, header)
                for rec in records:
                    self._finished[rec.case.id] = rec
                self.resumed_lines = len(records)
        if existing is not None:
            self.header = existing
            self._fh: IO[bytes] = open(self.path, "r+b")
            self._fh.truncate(valid_end)
            self._fh.seek(valid_end)
            if valid_end > 0 and not data[:valid_end].endswith(b"\n"):
                self._fh.write(b"\n")
        else:
            self.header = header
            self._fh = open(self.path, "wb")
            self._fh.write(dump_json_line(header).encode("utf-8") + b"\n")
        self._flush()

    def _check_same_run(self, existing: RunHeader, header: RunHeader) -> None:
        if existing.version != header.version:
            raise InputError(
                f"cannot resume: the run log has format version {existing.version}, this "
                f"ProbeGuard writes version {header.version}; use a new output directory",
                file=str(self.path),
                line=1,
                field="version",
            )
        if existing.pipeline_fingerprint != header.pipeline_fingerprint:
            raise InputError(
                f"cannot resume: this run directory belongs to a different pipeline or "
                f"pipeline configuration (its log was written by pipeline "
                f"'{existing.pipeline_name}' with fingerprint "
                f"{existing.pipeline_fingerprint[:12]}..., the current one is "
                f"'{header.pipeline_name}' with {header.pipeline_fingerprint[:12]}...); "
                f"use a new output directory, or run without --resume to start over",
                file=str(self.path),
                line=1,
                field="pipeline_fingerprint",
            )
        if (
            existing.corpus_fingerprint is not None
            and header.corpus_fingerprint is not None
            and existing.corpus_fingerprint != header.corpus_fingerprint
        ):
            raise InputError(
                "cannot resume: this run directory was scanned against a different corpus "
                f"({existing.corpus_fingerprint[:12]}... vs {header.corpus_fingerprint[:12]}...); "
                "use a new output directory, or run without --resume to start over",
                file=str(self.path),
                line=1,
                field="corpus_fingerprint",
            )

    def finished(self) -> dict[str, CaseRecord]:
        """Case id → its latest record: those read from the file when resuming, updated by
        every ``append`` since. Records with an error are included (``record.ok`` tells)."""
        with self._lock:
            return dict(self._finished)

    def append(self, record: CaseRecord, line: str | None = None) -> None:
        """Write ``record`` as one line and flush it; ``line``, when given, is
        ``dump_json_line(record)`` already computed (``logged_with_line``)."""
        line_bytes = (dump_json_line(record) if line is None else line).encode("utf-8") + b"\n"
        with self._lock:
            if self._fh.closed:
                raise ValueError(f"run log {self.path} is closed")
            self._fh.write(line_bytes)
            self._flush()
            self._finished[record.case.id] = record

    def _flush(self) -> None:
        self._fh.flush()
        if self.fsync:
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        with self._lock:
            if not self._fh.closed:
                self._fh.close()

    @property
    def closed(self) -> bool:
        return self._fh.closed

    def __enter__(self) -> RunLogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RunLogWriter({str(self.path)!r}, finished={len(self._finished)})"

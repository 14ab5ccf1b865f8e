"""Atomic file writes: a reader (or a crash) never sees a half-written file."""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def current_umask() -> int:
    """The process's file-creation mask. Linux reports it in ``/proc/self/status``
    (``Umask:``), which reads it without changing it; elsewhere it is set and restored."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | Path, text: str, *, fsync: bool = True) -> Path:
    """Write ``text`` (UTF-8, ``\n`` line ends) to a temporary file beside ``path``, fsync it
    (unless ``fsync=False``: a cache entry that a crash loses is only a miss), then
    ``os.replace`` it over ``path``. Readers see the old file or the new one, never a part.
    The file gets the mode ``open()`` would give it, ``0o666 & ~umask`` (0644 under the usual
    umask 022, like ``run.jsonl``), not the 0600 of ``mkstemp``."""
    return atomic_write_pieces(path, (text,), fsync=fsync)


def atomic_write_pieces(path: str | Path, pieces: Iterable[str], *, fsync: bool = True) -> Path:
    """``atomic_write_text`` of ``"".join(pieces)``, written piece by piece, so a large file
    (``run.json``) never exists whole in memory."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, 0o666 & ~current_umask())
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            for piece in pieces:
                fh.write(piece)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def json_safe(value: Any) -> Any:
    """``value`` with every NaN/inf float replaced by None (JSON has no NaN; pydantic writes
    ``run.json`` the same way), recursively through dicts, lists and tuples."""
    if isinstance(value, float):
        return None if not math.isfinite(value) else value
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value

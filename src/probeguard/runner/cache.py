"""On-disk response cache: call key → ``PipelineOutput``.

Content-addressed: the key is ``Case.call_key(pipeline.fingerprint())``, a sha256 of everything
that can change the output, so a hit is always the answer the same pipeline gave to the same
question and variation. Entries live at ``<directory>/<key[:2]>/<key>.json`` (256 fan-out
folders keep directories small at 100k+ entries).

Writes are atomic: the JSON goes to a temporary file in the entry's folder, then
``os.replace`` moves it into place, so a reader sees the old entry, the new one or none —
never half a file — and concurrent writers of the same key (threads or processes) leave one
complete entry (the last writer wins). A file that does not parse (a disk error, a manual edit)
is a miss, reported through ``logging``; it is overwritten by the next ``put``.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

from pydantic import ValidationError

from probeguard.core.io import atomic_write_text
from probeguard.core.pipeline import PipelineOutput
from probeguard.log.writer import dump_json_line

__all__ = ["ResponseCache"]

logger = logging.getLogger(__name__)

_KEY = re.compile(r"[0-9A-Za-z_-]{3,128}")


class ResponseCache:
    """A directory of cached pipeline outputs, one JSON file per call key."""

    def __init__(self, directory: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self.directory = Path(directory)
        self.fsync = fsync

    def path_for(self, key: str) -> Path:
        """Where the entry for ``key`` lives (``<dir>/<key[:2]>/<key>.json``)."""
        if not _KEY.fullmatch(key):
            raise ValueError(f"bad cache key {key!r}: expected 3-128 characters of [0-9A-Za-z_-]")
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> PipelineOutput | None:
        """The cached output for ``key``, or None (absent, or unreadable: logged)."""
        path = self.path_for(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            logger.warning("response cache: cannot read %s (%s); treating it as a miss", path, exc)
            return None
        try:
            return PipelineOutput.model_validate_json(data)
        except (ValidationError, ValueError) as exc:
            logger.warning(
                "response cache: corrupt entry %s (%s); treating it as a miss",
                path,
                str(exc).splitlines()[0][:200],
            )
            return None

    def put(self, key: str, output: PipelineOutput) -> None:
        """Store ``output`` under ``key`` atomically (temp file + ``os.replace``)."""
        atomic_write_text(self.path_for(key), dump_json_line(output), fsync=self.fsync)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.path_for(key).is_file()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.directory)!r})"

"""On-disk response cache: call key → ``PipelineOutput``.

Content-addressed: the key is ``Case.call_key(pipeline.fingerprint())``, a sha256 of everything
that can change the output, so a hit is always the answer the same pipeline gave to the same
question and variation. Entries live at ``<directory>/<key[:2]>/<key>.json`` (256 fan-out
folders keep directories small at 100k+ entries).

Writes are atomic: the JSON goes to a temporary file in the entry's folder
(``.<key>.json.<pid>-<thread id>.tmp``: no other live writer uses that name), then
``os.replace`` moves it into place, so a reader sees the old entry, the new one or none —
never half a file — and concurrent writers of the same key (threads or processes) leave one
complete entry (the last writer wins). A file that does not parse (a disk error, a manual edit)
is a miss, reported through ``logging``; it is overwritten by the next ``put``.

``CacheWriter`` moves the runner's writes off the event loop: serialising an output, the
folder, the temporary file and the rename cost ~0.2 ms a case (issue 18), which the loop then
spends on no request. An entry costs four file-system calls (open, write, close, rename):
the file is created with mode ``0o666`` so that the kernel applies the umask (the mode
``core.io.atomic_write_text`` gives, without reading the umask from ``/proc`` per file), and a
fan-out folder is created once per cache object (made again if it vanished). A killed run leaves at most a ``.<key>.json.*.tmp`` file beside the
entries (never read: a reader only opens ``<key>.json``), never half an entry.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import threading
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from pydantic import ValidationError

from probeguard.core.pipeline import PipelineOutput
from probeguard.log.writer import dump_json_line

__all__ = ["CacheWriter", "ResponseCache"]

logger = logging.getLogger(__name__)

_KEY = re.compile(r"[0-9A-Za-z_-]{3,128}")
WRITER_THREADS = 4
"""Threads of a ``CacheWriter``."""


class ResponseCache:
    """A directory of cached pipeline outputs, one JSON file per call key."""

    def __init__(self, directory: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self.directory = Path(directory)
        self.fsync = fsync
        self._folders: set[Path] = set()
        """Fan-out folders known to exist (created by this object)."""

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
        path = self.path_for(key)
        data = dump_json_line(output).encode("utf-8")
        try:
            self._write_entry(path, data)
        except FileNotFoundError:  # the folder went away since this object made it
            self._folders.discard(path.parent)
            self._write_entry(path, data)

    def _write_entry(self, path: Path, data: bytes) -> None:
        """``data`` to a temporary file beside ``path``, then ``os.replace`` over it; the
        temporary file is removed when anything fails."""
        folder = path.parent
        if folder not in self._folders:
            folder.mkdir(parents=True, exist_ok=True)
            self._folders.add(folder)
        tmp = folder / f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                if self.fsync:
                    os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    def existing(self, keys: Iterable[str]) -> set[str]:
        """The keys among ``keys`` that have an entry now: one directory listing per fan-out
        folder the keys use, instead of one failed ``open`` per missing key."""
        by_folder: dict[Path, list[str]] = {}
        for key in keys:
            path = self.path_for(key)
            by_folder.setdefault(path.parent, []).append(key)
        found: set[str] = set()
        for folder, wanted in by_folder.items():
            try:
                names = set(os.listdir(folder))
            except OSError:  # absent (nothing cached there yet) or unreadable: all misses
                continue
            found.update(k for k in wanted if f"{k}.json" in names)
        return found

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.path_for(key).is_file()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.directory)!r})"


class CacheWriter:
    """Writes a ``ResponseCache``'s entries on background threads.

    ``submit`` returns at once; ``drain`` waits (without blocking the event loop) until every
    entry submitted so far is on disk; ``close`` stops accepting and lets the queued writes
    finish on their own (Python joins the threads at exit). Several threads, because an
    entry's cost is file-system calls that release the GIL (creating a file took ~2 ms on a
    loaded disk here). A write that fails with ``OSError`` is logged and dropped: a missing
    entry is only a cache miss.
    """

    def __init__(self, cache: ResponseCache, threads: int = WRITER_THREADS) -> None:
        self.cache = cache
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="probeguard-cache")
        self._pending: set[Future[None]] = set()

    def submit(self, key: str, output: PipelineOutput) -> None:
        """Queue ``cache.put(key, output)``."""
        future = self._pool.submit(self._write, key, output)
        self._pending.add(future)
        future.add_done_callback(self._pending.discard)

    def _write(self, key: str, output: PipelineOutput) -> None:
        try:
            self.cache.put(key, output)
        except OSError as exc:
            logger.warning("response cache: cannot write %s (%s)", key, exc)

    async def drain(self) -> None:
        """Wait until every entry submitted so far is written."""
        pending = list(self._pending)
        if pending:
            await asyncio.gather(*(asyncio.wrap_future(f) for f in pending))

    def close(self) -> None:
        """No more submissions; queued writes still complete."""
        self._pool.shutdown(wait=False)

"""A content-addressed, on-disk store for what a scan derives from its inputs (the probes'
plans, the score stage, the attribution pass), kept under the response cache folder so that
a re-run skips the work (``engine.plans``, ``engine.scoring``, ``engine.attribution_cache``).

Key: a sha256 the caller computes over everything that can change the value, always with
``code_version()``: the bytes of every file of the ``probeguard`` package (code and package
data: word lists, paraphrase rules), the Python version, the installed versions of the
distributions ``probeguard`` requires, extras included (numpy draws the seeded randomness,
syntok splits sentences, tokenizers chunks by tokens), and the source files of any extra
modules the caller names (a third-party probe's). A different input, setting, seed or code is
a different key; nothing is ever invalidated in place. Entries are never evicted: delete the
sub-folders (``plans/``, ``scores/``, ``attributions/``) or the cache folder to clear them.

Layout: ``DIR/<kind>/<key[:2]>/<key>.json``; a file is one line ``sha256(payload)`` followed
by the payload (JSON text). Writes are atomic (``core.io.atomic_write_text``: a temporary file,
then ``os.replace``), so a reader sees a whole entry or none. A read that finds a file whose
checksum does not match, or a payload the caller cannot parse (``DerivedCache.load``), is a
miss, logged as a warning; the caller recomputes and the next ``put`` overwrites it. A write
that fails (read-only or full disk) is logged and ignored: the cache only saves time.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import inspect
import logging
import platform
import re
import sys
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TypeVar

import numpy as np
import pydantic_core
from pydantic import BaseModel

import probeguard
from probeguard.core.hashing import sha256_hex, sha256_stream
from probeguard.core.io import atomic_write_text
from probeguard.core.records import CaseRecord

__all__ = [
    "DerivedCache",
    "code_version",
    "dump_model",
    "key_json",
    "modules_version",
    "parse_model",
    "records_digest",
    "same_repr",
    "tree_digest",
]

log = logging.getLogger(__name__)

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

_KEY_CHARS = frozenset("0123456789abcdef")


@cache
def code_version() -> str:
    """sha256 over ``tree_digest`` of the ``probeguard`` package, the Python implementation
    and version, numpy's version and ``dependency_versions()``. Computed once per process
    (~30 ms for the package's ~330 files)."""
    return sha256_hex(
        tree_digest(Path(probeguard.__file__).resolve().parent),
        platform.python_implementation(),
        sys.version,
        np.__version__,
        *dependency_versions(),
    )


def tree_digest(root: Path) -> str:
    """sha256 over the relative path and bytes of every file under ``root`` (sorted by
    path; ``__pycache__`` folders and compiled ``.pyc``/``.pyo`` files left out), each
    length-prefixed."""
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and _is_source(p, root)):
        data = path.read_bytes()
        name = path.relative_to(root).as_posix().encode("utf-8")
        h.update(len(name).to_bytes(8, "big") + name + len(data).to_bytes(8, "big") + data)
    return h.hexdigest()


def dependency_versions() -> list[str]:
    """``name==version`` (or ``name absent``) of each distribution ``probeguard``'s metadata
    requires, extras included but the ``dev`` extra's test tools; empty when ``probeguard`` is
    not installed as a distribution (run from a source folder)."""
    try:
        requires = importlib.metadata.requires("probeguard") or []
    except importlib.metadata.PackageNotFoundError:
        return []
    names = sorted(
        {re.split(r"[\s;<>=!~\[]", r, maxsplit=1)[0] for r in requires if 'extra == "dev"' not in r}
    )
    return [f"{name}=={_version(name)}" for name in names if name != "probeguard"]


def _version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def _is_source(path: Path, root: Path) -> bool:
    """A package file that can change what a scan derives (not compiled bytecode)."""
    parts = path.relative_to(root).parts
    return "__pycache__" not in parts and path.suffix not in {".pyc", ".pyo"}


def modules_version(modules: Iterable[ModuleType | str]) -> str:
    """sha256 over the source files of ``modules`` that live outside the ``probeguard``
    package (their bytes; a module without a source file contributes its name only), so a
    third-party plugin's edit changes the key too."""
    root = Path(probeguard.__file__).resolve().parent
    parts: list[str | bytes] = []
    for module in modules:
        mod = sys.modules.get(module) if isinstance(module, str) else module
        name = module if isinstance(module, str) else module.__name__
        parts.append(name)
        source = _source_file(mod) if mod is not None else None
        if source is not None and not Path(source).resolve().is_relative_to(root):
            parts.append(Path(source).read_bytes())
    return sha256_hex(*parts)


RUN_FIELDS: set[str] = {"duration_s", "cached", "attempts"}
"""Record fields the clock and the cache set: a first run and a cached re-run differ there,
and no judge, metric or attribution reads them."""


def key_json(value: object, *, exclude: set[str] | None = None) -> bytes:
    """JSON of ``value`` (a model, or plain data) as a key part: never raises for NaN (a
    token) or a value JSON cannot hold (its ``str``: a key that changes run to run is only
    a miss). Dict keys keep their order (a reordered config file is a miss, never a wrong
    hit)."""
    return pydantic_core.to_json(
        value, exclude=exclude, inf_nan_mode="constants", serialize_unknown=True
    )


def records_digest(records: Iterable[CaseRecord]) -> str:
    """``core.hashing.sha256_stream`` of each record's JSON without ``RUN_FIELDS`` (NaN and inf as
    tokens)."""
    return sha256_stream(
        pydantic_core.to_json(r, exclude=RUN_FIELDS, inf_nan_mode="constants") for r in records
    )


def dump_model(model: BaseModel) -> str:
    """JSON of ``model``'s Python-mode dump, NaN and inf as tokens: unlike its JSON-mode dump
    (where a ``JsonEstimate`` writes NaN as null), the values read back as they were."""
    return pydantic_core.to_json(model.model_dump(mode="python"), inf_nan_mode="constants").decode(
        "utf-8"
    )


def parse_model(cls: type[M], payload: str) -> M:
    """``cls`` validated from ``dump_model``'s JSON (Python-mode validation, NaN tokens
    read as NaN); ``ValueError`` when the payload does not parse or validate."""
    return cls.model_validate(pydantic_core.from_json(payload, allow_inf_nan=True))


def same_repr(rebuilt: object, computed: object) -> bool:
    """Whether a value read back from JSON is the computed one: the same ``repr``, which,
    unlike ``==``, tells a tuple from a list, ``1`` from ``1.0`` and ``True`` from ``1``,
    and holds for NaN (``nan``), so a cache serves only values that render and dump as the
    computed ones do."""
    return repr(rebuilt) == repr(computed)


def _source_file(module: ModuleType) -> str | None:
    """The module's source file, or None (a built-in or extension module has none)."""
    try:
        return inspect.getsourcefile(module)
    except TypeError:
        return None


class DerivedCache:
    """One kind of derived value (``plans``, ``scores``) under a cache folder."""

    def __init__(self, directory: str | Path, kind: str) -> None:
        self.directory = Path(directory) / kind
        self.kind = kind

    def path_for(self, key: str) -> Path:
        """Where the entry for ``key`` (64 lowercase hex digits) lives."""
        if len(key) != 64 or not _KEY_CHARS.issuperset(key):
            raise ValueError(f"bad {self.kind} cache key {key!r}: expected a sha256 hex digest")
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> str | None:
        """The payload stored under ``key``, or None (absent; unreadable or corrupt: logged)."""
        path = self.path_for(key)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.warning(
                "%s cache: cannot read %s (%s); treating it as a miss", self.kind, path, exc
            )
            return None
        checksum, _, payload = raw.partition(b"\n")
        if hashlib.sha256(payload).hexdigest().encode("ascii") != checksum:
            log.warning("%s cache: corrupt entry %s; treating it as a miss", self.kind, path)
            return None
        try:
            return payload.decode("utf-8")
        except UnicodeDecodeError:  # pragma: no cover - the checksum matched its own bytes
            log.warning("%s cache: corrupt entry %s; treating it as a miss", self.kind, path)
            return None

    def load(self, key: str, parse: Callable[[str], T]) -> T | None:
        """``parse(payload)`` of the entry under ``key``; None when absent, corrupt, or when
        ``parse`` raises ``ValueError`` (pydantic's ``ValidationError`` is one): logged."""
        payload = self.get(key)
        if payload is None:
            return None
        try:
            return parse(payload)
        except ValueError as exc:
            log.warning(
                "%s cache: unreadable entry %s (%s); treating it as a miss",
                self.kind,
                self.path_for(key),
                str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__,
            )
            return None

    def put(self, key: str, payload: str) -> None:
        """Store ``payload`` under ``key`` atomically; a failed write is logged and dropped."""
        path = self.path_for(key)
        checksum = hashlib.sha256(payload.encode("utf-8")).hexdigest()
        try:
            atomic_write_text(path, f"{checksum}\n{payload}", fsync=False)
        except OSError as exc:
            log.warning("%s cache: cannot write %s (%s)", self.kind, path, exc)

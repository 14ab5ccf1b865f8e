"""Dataset manifests: what a dataset is, pinned by hashes (``probeguard dataset manifest``).

A manifest (``DatasetManifest``, JSON) lists every case file with its sha256 and case count,
the corpus fingerprint (``core.documents.corpus_fingerprint``) and document count, the counts
of cases by type, evolution, tag, split and source, and the generators named in the cases'
``meta`` (``generator`` — a name, ``name/version``, or an object ``{name, version, seed}`` —
with ``generator_version`` and ``seed`` beside a name). It is written with sorted keys and no
timestamp: the same files give the same bytes, so the manifest's own sha256 names the dataset.

A scan that reads a case file with a manifest (``corpus.manifest``, else
``<file>.manifest.json`` beside it) checks the file's sha256 against it and refuses a
mismatch (``InputError``); the run log records the manifest's sha256
(``RunLog.dataset_manifests``).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from probeguard._version import __version__
from probeguard.core.documents import Document, corpus_fingerprint
from probeguard.core.errors import InputError
from probeguard.core.io import atomic_write_text
from probeguard.dataset.formats import LocatedCase
from probeguard.dataset.split import case_type
from probeguard.dataset.validate import case_split

__all__ = [
    "MANIFEST_SUFFIX",
    "DatasetManifest",
    "GeneratorInfo",
    "ManifestFile",
    "build_manifest",
    "check_manifest",
    "file_sha256",
    "manifest_json",
    "manifest_beside",
    "manifest_hashes",
    "write_manifest",
]

MANIFEST_SUFFIX = ".manifest.json"
"""``cases.jsonl`` -> ``cases.jsonl.manifest.json``: the manifest a scan finds by itself."""

_STRICT = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class ManifestFile(BaseModel):
    """One case file of the dataset."""

    model_config = _STRICT

    path: str
    """The file, relative to the manifest's folder (POSIX separators)."""
    sha256: str
    """sha256 of the file's bytes."""
    cases: int
    """Cases read from it."""


class GeneratorInfo(BaseModel):
    """A generator named in the cases' ``meta``, with the cases it made."""

    model_config = _STRICT

    name: str
    version: str | None = None
    seed: int | None = None
    cases: int
    """Cases whose meta names this generator, version and seed."""


class DatasetManifest(BaseModel):
    """What a dataset is (module docstring)."""

    model_config = _STRICT

    kind: Literal["dataset-manifest"] = "dataset-manifest"
    version: int = 1
    """Format version of the manifest."""
    probeguard_version: str = __version__
    """The ProbeGuard version that wrote it."""
    files: tuple[ManifestFile, ...]
    corpus_fingerprint: str | None = None
    """sha256 of the corpus the cases refer to; None: no corpus given."""
    corpus_documents: int | None = None
    cases: int
    """All cases, over every file."""
    counts: dict[str, dict[str, int]] = Field(default_factory=dict)
    """``{"type"|"evolution"|"tag"|"split"|"source": {value: cases}}``; a case without an
    evolution or split is not counted there; a type-less case counts as ``golden``."""
    generators: tuple[GeneratorInfo, ...] = ()


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes (read in 1 MiB blocks)."""
    h = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _counts(cases: Sequence[LocatedCase]) -> dict[str, dict[str, int]]:
    counters: dict[str, Counter[str]] = {
        k: Counter() for k in ("type", "evolution", "tag", "split", "source")
    }
    for loc in cases:
        c = loc.case
        counters["type"][case_type(c)] += 1
        counters["source"][c.source] += 1
        counters["tag"].update(c.tags)
        if c.evolution is not None:
            counters["evolution"][c.evolution] += 1
        split = case_split(loc)
        if split is not None:
            counters["split"][split] += 1
    return {k: dict(sorted(v.items())) for k, v in counters.items()}


def _generator(meta: dict[str, Any]) -> tuple[str, str | None, int | None] | None:
    gen = meta.get("generator")
    if isinstance(gen, dict) and gen.get("name") is not None:
        version, seed = gen.get("version"), gen.get("seed")
        name = str(gen["name"])
    elif isinstance(gen, str):
        name, version, seed = gen, meta.get("generator_version"), meta.get("seed")
        if version is None and "/" in gen:
            name, _, version = gen.rpartition("/")
    else:
        return None
    return (
        name,
        str(version) if version is not None else None,
        seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
    )


def _generators(cases: Sequence[LocatedCase]) -> tuple[GeneratorInfo, ...]:
    seen = Counter(g for loc in cases if (g := _generator(loc.case.meta)) is not None)
    return tuple(
        GeneratorInfo(name=n, version=v, seed=s, cases=k)
        for (n, v, s), k in sorted(seen.items(), key=lambda kv: repr(kv[0]))
    )


def _relative(path: Path, root: Path) -> str:
    return Path(os.path.relpath(path.resolve(), root.resolve())).as_posix()


def build_manifest(
    files: Sequence[tuple[Path, Sequence[LocatedCase]]],
    *,
    root: Path,
    documents: Sequence[Document] | None = None,
) -> DatasetManifest:
    """The manifest of case files (each with its parsed cases); paths relative to ``root``,
    the folder the manifest is written to."""
    cases = [c for _, cs in files for c in cs]
    return DatasetManifest(
        files=tuple(
            ManifestFile(path=_relative(p, root), sha256=file_sha256(p), cases=len(cs))
            for p, cs in files
        ),
        corpus_fingerprint=corpus_fingerprint(documents) if documents else None,
        corpus_documents=len(documents) if documents else None,
        cases=len(cases),
        counts=_counts(cases),
        generators=_generators(cases),
    )


def manifest_json(manifest: DatasetManifest) -> str:
    """The manifest's bytes: sorted keys, two-space indent, a final newline."""
    return json.dumps(manifest.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"


def write_manifest(manifest: DatasetManifest, path: Path) -> str:
    """Write the manifest; return its sha256."""
    text = manifest_json(manifest)
    atomic_write_text(path, text)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def manifest_beside(path: Path) -> Path:
    """``<file>.manifest.json``: where a scan looks for a case file's manifest."""
    return path.with_name(path.name + MANIFEST_SUFFIX)


def _read(manifest_path: Path) -> DatasetManifest:
    try:
        return DatasetManifest.model_validate_json(manifest_path.read_bytes())
    except OSError as exc:
        raise InputError(f"cannot read the manifest: {exc}", file=str(manifest_path)) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or None
        raise InputError(
            f"not a dataset manifest: {first['msg']}", file=str(manifest_path), field=field
        ) from None


def check_manifest(path: Path, manifest_path: Path) -> str:
    """Check a case file against its manifest; return the manifest's sha256. ``InputError``
    when the manifest does not list the file or its sha256 differs."""
    manifest = _read(manifest_path)
    root = manifest_path.parent
    entry = next((f for f in manifest.files if (root / f.path).resolve() == path.resolve()), None)
    if entry is None:
        raise InputError(
            f"the manifest {manifest_path} does not list this file "
            f"(it lists {', '.join(f.path for f in manifest.files)})",
            file=str(path),
        )
    actual = file_sha256(path)
    if actual != entry.sha256:
        raise InputError(
            f"the file does not match its manifest {manifest_path}: sha256 {actual[:12]}..., "
            f"the manifest says {entry.sha256[:12]}...; the dataset changed since the manifest "
            f"was written (rerun probeguard dataset manifest if the change is intended)",
            file=str(path),
        )
    return hashlib.sha256(manifest_path.read_bytes()).hexdigest()


def manifest_hashes(paths: Sequence[Path | None], manifest: Path | None = None) -> dict[str, str]:
    """Check each case file against ``manifest`` (else ``<file>.manifest.json`` when it
    exists); ``{file name: manifest sha256}`` for the files that had one. ``InputError`` on a
    missing configured manifest, an unlisted file or a sha256 mismatch."""
    if manifest is not None and not manifest.is_file():
        raise InputError("no such manifest", file=str(manifest), field="corpus.manifest")
    out: dict[str, str] = {}
    for path in paths:
        if path is None:
            continue
        found = manifest if manifest is not None else manifest_beside(path)
        if found.is_file():
            out[path.name] = check_manifest(path, found)
    return out

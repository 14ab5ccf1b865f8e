"""``probeguard dataset``: the commands over case files (schema, validate, split, manifest,
import). Each is a thin layer over ``probeguard.dataset``; bad input exits 2 with one message
naming the file, line and field."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from probeguard.cli.common import fail
from probeguard.core.documents import Document
from probeguard.core.errors import ProbeGuardError
from probeguard.corpus.loaders import load_corpus
from probeguard.dataset.formats import load_dataset, write_dataset
from probeguard.dataset.importers import PRESETS, import_records, parse_maps
from probeguard.dataset.manifest import (
    DatasetManifest,
    build_manifest,
    manifest_beside,
    write_manifest,
)
from probeguard.dataset.schema import case_json_schema
from probeguard.dataset.split import (
    case_type,
    largest_group,
    parse_ratios,
    split_cases,
    write_splits,
)
from probeguard.dataset.validate import validate_files

__all__ = ["dataset"]


@click.group()
def dataset() -> None:
    """Case files: export the schema, validate, split, write a manifest, import."""


@dataset.command(name="schema")
@click.argument("kind", required=False, default="case", type=click.Choice(["case", "manifest"]))
def schema_command(kind: str) -> None:
    """Print the JSON schema of one case record (the dataset JSONL format; the default) or
    of a dataset manifest."""
    schema = case_json_schema() if kind == "case" else DatasetManifest.model_json_schema()
    click.echo(json.dumps(schema, indent=2, sort_keys=True))


def _corpus_options(required: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn = click.option(
            "--corpus",
            "corpus_path",
            type=click.Path(path_type=Path),
            required=required,
            help="The corpus (JSONL, JSON, CSV or a folder) the cases refer to.",
        )(fn)
        fn = click.option(
            "--id-field", default=None, help="The corpus records' id field (default: id)."
        )(fn)
        return click.option("--text-field", default="text", help="The records' text field.")(fn)

    return wrap


def _corpus(path: Path | None, id_field: str | None, text_field: str) -> list[Document] | None:
    if path is None:
        return None
    return load_corpus(path, id_field=id_field, text_field=text_field)


@dataset.command(name="validate")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@_corpus_options(required=False)
def validate_command(
    files: tuple[Path, ...], corpus_path: Path | None, id_field: str | None, text_field: str
) -> None:
    """Check case files: the schema, attack rules, duplicate ids and inputs, and with --corpus
    the evidence ids, spans and answers; leakage between splits. Exit 2 on any problem."""
    try:
        docs = _corpus(corpus_path, id_field, text_field)
    except ProbeGuardError as exc:
        fail(str(exc))
    result = validate_files(list(files), docs)
    for problem in result.problems:
        click.echo(f"error: {problem}", err=True)
    if not result.ok:
        click.echo(f"{len(result.problems)} problem(s) in {len(files)} file(s)", err=True)
        sys.exit(2)
    spans = sum(any(e.start is not None for e in c.case.evidence) for c in result.cases)
    checked = f"against {len(docs)} documents" if docs is not None else "without a corpus"
    click.echo(
        f"ok: {len(result.cases)} cases in {len(files)} file(s), {spans} with spans, "
        f"checked {checked}"
    )


@dataset.command(name="split")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--ratios", default="0.7,0.15,0.15", show_default=True, help="train,dev[,test].")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the shuffle.")
def split_command(file: Path, out_dir: Path, ratios: str, seed: int) -> None:
    """Split FILE into OUT/train.jsonl, dev.jsonl, test.jsonl: by evidence document (none in
    two splits), stratified by type, the same for the same seed."""
    try:
        cases = [c.case for c in load_dataset(file)]
        splits = split_cases(cases, parse_ratios(ratios), seed)
    except ProbeGuardError as exc:
        fail(str(exc))
    asked = parse_ratios(ratios)
    total = sum(len(s.cases) for s in splits)
    for split, path in zip(splits, write_splits(splits, out_dir), strict=True):
        types = Counter(case_type(c) for c in split.cases)
        docs = {d for c in split.cases for d in c.evidence_doc_ids}
        by_type = ", ".join(f"{t} {n}" for t, n in sorted(types.items()))
        click.echo(
            f"{split.name}: {len(split.cases)} cases, {len(docs)} documents -> {path}"
            + (f" ({by_type})" if by_type else "")
        )
    if any(abs(len(s.cases) / total - r) > 0.05 for s, r in zip(splits, asked, strict=True)):
        click.echo(
            f"note: cases that share an evidence document stay together; the largest such "
            f"group holds {largest_group(cases)} of {total} cases, so the splits miss the "
            f"ratios {ratios}"
        )


@dataset.command(name="manifest")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@_corpus_options(required=False)
@click.option(
    "--out",
    "out_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The manifest (default, for one file: FILE.manifest.json, which a scan finds).",
)
def manifest_command(
    files: tuple[Path, ...],
    corpus_path: Path | None,
    id_field: str | None,
    text_field: str,
    out_path: Path | None,
) -> None:
    """Write a manifest of case files: the sha256 of each, the corpus fingerprint, counts by
    type, evolution, tag, split and source, and the generators named in the cases."""
    if out_path is None:
        if len(files) != 1:
            fail("give --out for a manifest of several files")
        out_path = manifest_beside(files[0])
    try:
        docs = _corpus(corpus_path, id_field, text_field)
        parsed = [(Path(f), load_dataset(f)) for f in files]
    except ProbeGuardError as exc:
        fail(str(exc))
    manifest = build_manifest(parsed, root=out_path.parent, documents=docs)
    digest = write_manifest(manifest, out_path)
    types = ", ".join(f"{t} {n}" for t, n in manifest.counts["type"].items())
    click.echo(
        f"manifest {out_path} (sha256 {digest[:12]}): {manifest.cases} cases in "
        f"{len(files)} file(s) ({types})"
    )


@dataset.command(name="import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--map", "maps", multiple=True, help="SRC=DST: a source field and where it goes.")
@click.option("--preset", type=click.Choice(list(PRESETS)), help="A known export's mapping.")
@_corpus_options(required=False)
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False, path_type=Path))
def import_command(
    file: Path,
    maps: tuple[str, ...],
    preset: str | None,
    corpus_path: Path | None,
    id_field: str | None,
    text_field: str,
    out_path: Path,
) -> None:
    """Convert a foreign test set (RAGAS, DeepEval, eval records, case/attack layouts) to the
    case schema; unmapped fields are kept in meta. With --corpus, passages given as text
    become evidence spans."""
    try:
        docs = _corpus(corpus_path, id_field, text_field)
        mapping = parse_maps(maps, preset)
        result = import_records(file, mapping, documents=docs)
    except ProbeGuardError as exc:
        fail(str(exc))
    write_dataset(result.cases, out_path)
    parts = [f"imported {len(result.cases)} cases -> {out_path}"]
    if result.kept_in_meta:
        parts.append(f"kept in meta: {', '.join(sorted(result.kept_in_meta))}")
    if result.located or result.unlocated:
        parts.append(
            f"passages: {result.located} located in the corpus, {result.unlocated} kept in "
            f"meta.reference_contexts"
        )
    click.echo("; ".join(parts))

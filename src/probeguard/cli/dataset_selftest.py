"""``probeguard dataset selftest [FILE --corpus C]``: mutation tests of the evaluator
(``probeguard.engine.selftest``) over the demo's golden questions and attack cases, or over
the cases of FILE (any case file a scan reads; an attack-case file is read as one) and the
corpus C. Prints the mutation × scorer
table (``flipped/applicable``, ``*`` on the cells the mutation targets) and exits 1 when a
targeted scorer fails to flip or a scorer fails a passing output."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from probeguard.cli.common import fail
from probeguard.core.cases import Case
from probeguard.core.documents import Document
from probeguard.core.errors import InputError
from probeguard.corpus.loaders import load_corpus
from probeguard.dataset.formats import dataset_format, load_case_file
from probeguard.engine.selftest import MUTATIONS, SCORERS, Cell, SelftestReport, run_selftest
from probeguard.engine.stages import demo_data_dir

__all__ = ["selftest_command", "table_lines"]


def _inputs(file: Path | None, corpus: Path | None) -> tuple[list[Case], list[Document]]:
    """The cases and corpus to test: FILE and C, or the demo's questions and attacks."""
    if file is None:
        data = demo_data_dir()
        documents = load_corpus(data / "corpus.jsonl")
        ids = frozenset(d.id for d in documents)
        golden = load_case_file(data / "questions.jsonl", corpus_ids=ids)
        return [*golden, *load_case_file(data / "attacks.jsonl", corpus_ids=ids, attack=True)], (
            documents
        )
    if corpus is None:
        raise InputError("FILE needs --corpus C (the corpus its evidence ids name)")
    documents = load_corpus(corpus)
    attack = file.is_file() and dataset_format(file) == "attack"
    ids = frozenset(d.id for d in documents)
    return load_case_file(file, corpus_ids=ids, attack=attack), documents


def _cell_text(cell: Cell) -> str:
    if cell.targeted:
        return f"{cell.targeted_flipped}/{cell.targeted_applicable}*"
    return f"{cell.flipped}/{cell.applicable}" if cell.applicable else "-"


def table_lines(report: SelftestReport) -> list[str]:
    """The mutation × scorer table: ``flipped/applicable``; on a targeted cell (``*``) over
    the cases the mutation targets the scorer on; ``-`` where no passing baseline was
    mutated."""
    width = max(len(m) for m in MUTATIONS)
    rows = [f"{'mutation':<{width}}  " + "  ".join(f"{s:>11}" for s in SCORERS)]
    for name in MUTATIONS:
        cells = [_cell_text(report.cells[(name, s)]) for s in SCORERS]
        rows.append(f"{name:<{width}}  " + "  ".join(f"{c:>11}" for c in cells))
    return rows


@click.command(name="selftest")
@click.argument("file", required=False, type=click.Path(exists=True, path_type=Path))
@click.option("--corpus", type=click.Path(exists=True, path_type=Path), help="Corpus of FILE.")
def selftest_command(file: Path | None, corpus: Path | None) -> None:
    """Mutate passing answers (wrong number, date, entity, negation, dropped or forbidden
    citation, missing evidence, answering instead of refusing) and check that each scorer
    it targets flips from pass to fail; exit 1 when one does not."""
    try:
        cases, documents = _inputs(file, corpus)
    except InputError as exc:
        fail(str(exc))
    report = run_selftest(cases, documents)
    click.echo(f"selftest over {report.cases} cases (flipped/applicable; * targeted)")
    for line in table_lines(report):
        click.echo(line)
    for (mutation, scorer), cell in report.cells.items():
        if cell.missed:
            click.echo(f"NOT FLIPPED: {scorer} on {mutation}: {', '.join(cell.missed)}")
    for case_id, scorer in report.baseline_failures:
        click.echo(f"BASELINE FAILED: {scorer} fails the passing output of {case_id}")
    click.echo("selftest passed" if report.ok else "selftest FAILED")
    if not report.ok:
        sys.exit(1)

"""``probeguard dataset synth CORPUS --n N --seed S --out cases.jsonl``: golden questions and
attack cases synthesized from a bare corpus, offline and deterministically
(``probeguard.engine.synth``). Two files: the golden questions in the golden-question format
(``--out``, the ``corpus.questions`` of a scan config) and the attack cases in the attack-case
format with its ``type`` (``--attacks``, default ``<out stem>.attacks.jsonl``; a scan config's
``corpus.attacks``)."""

from __future__ import annotations

from pathlib import Path

import click

from probeguard.cli.common import fail
from probeguard.core.errors import InputError
from probeguard.corpus.jsonl_writer import write_jsonl_atomic
from probeguard.corpus.loaders import FORMATS, load_corpus
from probeguard.dataset.synth import Synthesis, records
from probeguard.engine.synth import BASELINE_K, synthesize_checked

__all__ = ["synth_command"]


def attacks_path(out: Path) -> Path:
    """The default attack file beside ``out``: ``<stem>.attacks.jsonl``."""
    return out.with_name(f"{out.stem}.attacks.jsonl")


def summary_lines(result: Synthesis) -> list[str]:
    """What the command prints: counts, by evolution and type, and what was dropped."""
    stats = result.stats
    share = stats.duplicate_share
    lines = [
        f"synthesized {len(result.golden) + len(result.attacks)} cases "
        f"({len(result.golden)} golden questions, {len(result.attacks)} attack cases) "
        f"from {len(stats.by_document)} documents, seed {result.seed}",
        "by evolution/type: " + ", ".join(f"{k} {v}" for k, v in stats.by_type.items()),
        f"near duplicates dropped: {stats.near_duplicates} of {stats.considered} drafts "
        f"considered ({share:.1%}); not retrieved by the BM25 baseline (top {BASELINE_K}): "
        f"{stats.not_retrieved}",
    ]
    return lines


@click.command(name="synth")
@click.argument("corpus", type=click.Path(exists=True, dir_okay=True, path_type=Path))
@click.option("--n", "n", type=click.IntRange(min=1), default=200, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option(
    "--attacks",
    "attacks_out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where the attack cases go (default: <out stem>.attacks.jsonl).",
)
@click.option("--format", "corpus_format", type=click.Choice(FORMATS), help="Corpus format.")
def synth_command(
    corpus: Path,
    n: int,
    seed: int,
    out: Path,
    attacks_out: Path | None,
    corpus_format: str | None,
) -> None:
    """Synthesize N cases from CORPUS: golden questions whose answers are exact spans (seven
    evolutions) and attack cases (seven types); same corpus, N and seed → same bytes."""
    try:
        documents = load_corpus(corpus, format=corpus_format)
    except InputError as exc:
        fail(str(exc))
    result = synthesize_checked(documents, n, seed)
    target = attacks_out or attacks_path(out)
    write_jsonl_atomic(records(result.golden, attack=False), out)
    write_jsonl_atomic(records(result.attacks, attack=True), target)
    for line in summary_lines(result):
        click.echo(line)
    click.echo(f"wrote {out} and {target}")

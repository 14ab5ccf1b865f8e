"""``probeguard bench squad | rgb | clapnq``: the QA benchmarks on public data (registered on
the ``bench`` group by ``cli.bench``). Each skips with a message naming the missing file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from pydantic import BaseModel

from probeguard.cli.common import fail, progress_bar
from probeguard.core.artifacts import write_artifact
from probeguard.core.errors import ProbeGuardError
from probeguard.engine.bench import clapnq, clapnq_data, rgb, rgb_data, squad
from probeguard.engine.bench.report import write_bench_report

__all__ = ["bench_clapnq", "bench_rgb", "bench_squad"]

SHARED = "set PROBEGUARD_SHARED_DATA to the folder that holds"


def _names(text: str) -> list[str]:
    return [s.strip() for s in text.split(",") if s.strip()]


def _missing(paths: list[Path], what: str, flag: str, folder: str) -> bool:
    """Echo the skip message and return True when any of ``paths`` is absent."""
    absent = [str(p) for p in paths if not p.is_file()]
    if absent:
        click.echo(
            f"skipped: {what} data not found at {', '.join(absent)} (give {flag} or "
            f"{SHARED} {folder})"
        )
    return bool(absent)


def _options(out: str, limit: int | None, slow_limit: int) -> Callable[[Any], Any]:
    """The options every QA bench takes."""
    options = [
        click.option(
            "--generators",
            default="extractive,smollm2",
            show_default=True,
            help="Comma-separated: extractive, smollm2.",
        ),
        click.option("--limit", type=int, default=limit, show_default=True, help="Questions."),
        click.option(
            "--slow-limit",
            type=int,
            default=slow_limit,
            show_default=True,
            help="Questions for SmolLM2 (5-30 s an answer on 2 shared cores).",
        ),
        click.option(
            "--embedder",
            type=click.Choice(["minilm", "hashing"]),
            default="minilm",
            show_default=True,
        ),
        click.option(
            "--retriever",
            type=click.Choice(["hybrid", "dense", "bm25"]),
            default="hybrid",
            show_default=True,
        ),
        click.option("--top-k", type=int, default=5, show_default=True),
        click.option("--seed", type=int, default=0, show_default=True),
        click.option("--concurrency", type=int, default=4, show_default=True),
        click.option("--no-progress", is_flag=True, help="Hide the progress bar."),
        click.option(
            "--out",
            "out_dir",
            type=click.Path(file_okay=False, path_type=Path),
            default=Path(out),
            show_default=True,
        ),
    ]

    def wrap(func: Any) -> Any:
        for option in reversed(options):
            func = option(func)
        return func

    return wrap


def _run(
    build: Callable[[Callable[[str, int, int], None]], BaseModel],
    render: Callable[[Any], str],
    out_dir: Path,
    no_progress: bool,
) -> None:
    """Run the bench, write ``bench.md`` and ``bench.json``, echo the table."""
    try:
        with progress_bar(disabled=no_progress) as progress:
            result = build(lambda _label, done, total: progress(done, total))
    except ProbeGuardError as exc:
        fail(str(exc))
        return
    table = render(result)
    write_bench_report(out_dir, table)
    write_artifact(out_dir / "bench.json", result)
    click.echo(table)
    click.echo(f"table: {out_dir / 'bench.md'}; result: {out_dir / 'bench.json'}")


@click.command(name="squad")
@click.option(
    "--data",
    "data_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="xquad.en.json (default: $PROBEGUARD_SHARED_DATA/xquad_en/ or ../shared/data/...).",
)
@click.option(
    "--conditions", default="retrieval,oracle", show_default=True, help="retrieval, oracle."
)
@_options("runs/bench-squad", None, 20)
def bench_squad(data_file: Path | None, conditions: str, **kw: Any) -> None:
    """SQuAD EM and F1 (XQuAD-en) of each generator over the reference pipeline's retrieval
    and with the gold paragraph as oracle context."""
    path = data_file or squad.default_data_file()
    if _missing([path], "XQuAD", "--data", "xquad_en/"):
        return
    out_dir, no_progress = kw.pop("out_dir"), kw.pop("no_progress")
    kw["generators"] = _names(kw["generators"])
    run = lambda progress: squad.run_squad(
        path,
        out_dir,
        conditions=_names(conditions),
        cache_dir=out_dir / "cache",
        progress=progress,
        **kw,
    )
    _run(run, squad.render_table, out_dir, no_progress)


@click.command(name="rgb")
@click.option(
    "--data",
    "data_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="en_fact.json (default: $PROBEGUARD_SHARED_DATA/rgb/ or ../shared/data/rgb/).",
)
@click.option(
    "--probe-generators",
    default="extractive",
    show_default=True,
    help="Generators the corpus_contradiction scan runs for ('' for none; ~5 calls a question).",
)
@_options("runs/bench-rgb", None, 10)
def bench_rgb(data_file: Path | None, probe_generators: str, **kw: Any) -> None:
    """RGB counterfactual robustness: how often answers repeat the planted fake answer vs
    give the true one, beside the corpus_contradiction probe's rate on the same questions.
    RGB is CC BY-NC-SA 4.0 (non-commercial)."""
    path = data_file or rgb_data.default_data_file()
    if _missing([path], "RGB", "--data", "rgb/"):
        return
    out_dir, no_progress = kw.pop("out_dir"), kw.pop("no_progress")
    kw["generators"] = _names(kw["generators"])
    run = lambda progress: rgb.run_rgb(
        path, out_dir, probe_generators=_names(probe_generators), progress=progress, **kw
    )
    _run(run, rgb.render_table, out_dir, no_progress)


@click.command(name="clapnq")
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder holding clapnq/ (default: $PROBEGUARD_SHARED_DATA or ../shared/data).",
)
@click.option(
    "--conditions", default="retrieval,oracle", show_default=True, help="retrieval, oracle."
)
@_options("runs/bench-clapnq", 100, 5)
def bench_clapnq(data_dir: Path | None, conditions: str, **kw: Any) -> None:
    """ClapNQ: refusal on unanswerable questions, answers to answerable ones, and the
    faithfulness of long answers (offline judge). ``--limit`` counts each file."""
    root = data_dir or clapnq_data.default_data_dir()
    if _missing(clapnq_data.data_files(root), "ClapNQ", "--data-dir", "clapnq/"):
        return
    out_dir, no_progress = kw.pop("out_dir"), kw.pop("no_progress")
    kw["generators"] = _names(kw["generators"])
    run = lambda progress: clapnq.run_clapnq(
        root,
        out_dir,
        conditions=_names(conditions),
        cache_dir=out_dir / "cache",
        progress=progress,
        **kw,
    )
    _run(run, clapnq.render_table, out_dir, no_progress)

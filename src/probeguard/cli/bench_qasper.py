"""``probeguard bench qasper``: the long-document experiments on the QASPER sample
(``engine.bench.qasper``), registered on the ``bench`` group by ``cli.bench``."""

from __future__ import annotations

import time
from pathlib import Path

import click

from probeguard.cli.common import fail, progress_bar
from probeguard.core.errors import ProbeGuardError
from probeguard.engine.bench import qasper, qasper_data

__all__ = ["bench_qasper"]


def _ints(text: str) -> list[int]:
    try:
        return [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise click.BadParameter(f"not a comma-separated list of integers: {text!r}") from None


@click.command(name="qasper")
@click.option(
    "--data",
    "data_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="qasper_train_sample.jsonl (default: $PROBEGUARD_SHARED_DATA/qasper_sample/ or "
    "../shared/data/qasper_sample/).",
)
@click.option(
    "--generators",
    default="extractive",
    show_default=True,
    help="Comma-separated: extractive, smollm2 (SmolLM2 needs the llm extra; use --limit).",
)
@click.option(
    "--retriever", type=click.Choice(list(qasper.BACKENDS)), default="bm25", show_default=True
)
@click.option(
    "--embedder",
    type=click.Choice(["minilm", "hashing"]),
    default="minilm",
    show_default=True,
    help="Embedder of dense and hybrid retrieval.",
)
@click.option("--top-k", type=int, default=3, show_default=True, help="Chunks retrieved.")
@click.option(
    "--chunk-sizes",
    default=",".join(map(str, qasper.CHUNK_SIZES)),
    show_default=True,
    help="Token-window sizes of the chunk-size experiment.",
)
@click.option(
    "--chunk-size",
    type=int,
    default=512,
    show_default=True,
    help="The size of the boundary and spread experiments.",
)
@click.option("--chunk-overlap", type=int, default=0, show_default=True)
@click.option("--limit", type=int, help="Only the first N usable questions.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstraps.")
@click.option("--resamples", type=int, default=2000, show_default=True)
@click.option("--concurrency", type=int, default=4, show_default=True)
@click.option("--no-cache", is_flag=True, help="Do not read or write the response cache.")
@click.option(
    "--no-plots",
    is_flag=True,
    help="Write bench.json, bench.md and bench.html only (no PNG/SVG files).",
)
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("runs/bench-qasper"),
    show_default=True,
)
def bench_qasper(
    data_file: Path | None,
    generators: str,
    retriever: str,
    embedder: str,
    top_k: int,
    chunk_sizes: str,
    chunk_size: int,
    chunk_overlap: int,
    limit: int | None,
    seed: int,
    resamples: int,
    concurrency: int,
    no_cache: bool,
    no_plots: bool,
    no_progress: bool,
    out_dir: Path,
) -> None:
    """Long-document experiments on QASPER (answers near chunk boundaries, distracting
    sections, evidence spread across sections, chunk sizes): token F1, faithfulness, ECS and
    the silent-failure quadrant per condition, with plots."""
    path = data_file or qasper_data.default_data_file()
    if not path.is_file():
        click.echo(
            f"skipped: QASPER data not found at {path} (give --data or set "
            "PROBEGUARD_SHARED_DATA to the folder that holds qasper_sample/)"
        )
        return
    started = time.perf_counter()
    try:
        with progress_bar(disabled=no_progress) as progress:
            result = qasper.run_qasper(
                path,
                generators=[g.strip() for g in generators.split(",") if g.strip()],
                retriever=retriever,
                embedder=embedder,
                top_k=top_k,
                chunk_sizes=_ints(chunk_sizes),
                chunk_size=chunk_size,
                chunk_overlap=chunk_overlap,
                limit=limit,
                seed=seed,
                resamples=resamples,
                concurrency=concurrency,
                cache_dir=None if no_cache else out_dir / "cache",
                progress=lambda _label, done, total: progress(done, total),
            )
        saved = qasper.write_qasper(result, out_dir, plots=not no_plots)
    except ProbeGuardError as exc:
        fail(str(exc))
        return
    click.echo((out_dir / "bench.md").read_text(encoding="utf-8"))
    if saved.plots_note and not no_plots:
        click.echo(f"note: no plots: {saved.plots_note}")
    calls = sum(r.calls for r in saved.runs)
    click.echo(
        f"{calls} pipeline calls in {time.perf_counter() - started:.0f} s; "
        f"table: {out_dir / 'bench.md'}; result: {out_dir / 'bench.json'}"
    )

"""The ``probeguard`` command: a thin layer over the public API. The CLI prints; the library
returns values and logs."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import click

from probeguard._version import __version__
from probeguard.errors import ProbeGuardError


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="probeguard")
@click.option("-v", "--verbose", count=True, help="More log output (-v info, -vv debug).")
def cli(verbose: int) -> None:
    """ProbeGuard: find a RAG pipeline's failures before its users do."""
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


@cli.command()
@click.option("--demo", is_flag=True, help="Scan the bundled demo corpus and golden questions.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              help="A YAML scan config.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Run directory (default: runs/demo with --demo, else runs/latest).")
@click.option("--resume", is_flag=True, help="Skip the cases an interrupted run finished.")
@click.option("--seed", type=int, help="Seed for every random choice (default 0).")
@click.option("--concurrency", type=int, help="Pipeline calls in flight at once.")
@click.option("--no-cache", is_flag=True, help="Do not read or write the response cache.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Response cache folder (default .probeguard-cache).")
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
def scan(demo: bool, config_path: Path | None, out_dir: Path | None, resume: bool,
         seed: int | None, concurrency: int | None, no_cache: bool, cache_dir: Path | None,
         no_progress: bool) -> None:
    """Run a scan and write run.jsonl, run.json and report.md."""
    from probeguard.config.loading import load_config, locate_in_file
    from probeguard.errors import InputError
    from probeguard.scan import scan as run_scan

    if not demo and config_path is None:
        _fail("give --demo or --config FILE")
    overrides: dict[str, Any] = {}
    if demo:
        overrides["demo"] = True
    if seed is not None:
        overrides["seed"] = seed
    runner: dict[str, Any] = {}
    if concurrency is not None:
        runner["concurrency"] = concurrency
    if cache_dir is not None:
        runner["cache_dir"] = str(cache_dir)
    if no_cache:
        runner["cache_dir"] = None
    if runner:
        overrides["runner"] = runner
    out = out_dir or Path("runs/demo" if demo else "runs/latest")
    try:
        config = load_config(config_path, overrides=overrides)
        with _progress_bar(disabled=no_progress) as progress:
            result = run_scan(config, out, resume=resume, progress=progress)
    except ProbeGuardError as exc:
        if isinstance(exc, InputError):
            exc = locate_in_file(exc, config_path)
        _fail(str(exc))
        return
    stats = result.run.stats
    click.echo(f"{stats.cases} cases: {stats.calls} pipeline calls, {stats.cache_hits} cache hits, "
               f"{stats.resumed} resumed, {stats.retries} retries, {stats.errors} errors "
               f"({stats.wall_s:.1f} s)")
    from probeguard.stats import Estimate

    golden = result.run.summary.get("golden")
    if golden:
        for key in ("retrieval_hit_at_k", "mrr", "answer_contains", "pass_rate"):
            click.echo(f"  {key:<20} {Estimate.model_validate(golden[key]).format(3)}")
    probes = result.run.summary.get("probes", {})
    for name, summary in probes.items():
        shown = ("skipped: " + summary["skipped"] if "skipped" in summary
                 else Estimate.model_validate(summary["failure_rate"]).format(3)
                 if summary["failure_rate"]["value"] is not None else "n/a")
        click.echo(f"  probe {name:<22} {shown}")
    fcs = result.run.summary.get("fcs")
    if fcs:
        value = fcs["value"]
        click.echo(f"  FCS {'n/a' if value is None or value != value else f'{value:.3f}'}; "
                   f"adversarial failure rate {fcs['adversarial_failure_rate']:.3f}")
    click.echo(f"report: {result.report_path}")
    click.echo(f"run log: {result.run_path}")


class _progress_bar:
    """A tqdm bar fed by the runner's ``progress(done, total)`` callback (on stderr)."""

    def __init__(self, disabled: bool) -> None:
        self.disabled = disabled or not sys.stderr.isatty()
        self.bar: Any = None

    def __enter__(self) -> Any:
        def update(done: int, total: int) -> None:
            if self.disabled:
                return
            if self.bar is not None and self.bar.total != total:
                self.bar.close()
                self.bar = None
            if self.bar is None:
                from tqdm import tqdm

                self.bar = tqdm(total=total, unit="case", file=sys.stderr)
            self.bar.n = done
            self.bar.refresh()

        return update

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()


@cli.command(name="list")
@click.argument("kind", required=False,
                type=click.Choice(["chunkers", "embedders", "retrievers", "rerankers",
                                   "generators", "pipelines", "prompts", "probes"]))
def list_parts(kind: str | None) -> None:
    """List the parts a pipeline can be assembled from (and, later, probes and metrics)."""
    from probeguard.registry import parts

    for group, names in parts().items():
        if kind is None or kind == group:
            click.echo(f"{group}:")
            for name, doc in names.items():
                click.echo(f"  {name:<24} {doc}")


@cli.group()
def bench() -> None:
    """Benchmarks on public data."""


@bench.command(name="hotpotqa")
@click.option("--data", "data_file", type=click.Path(dir_okay=False, path_type=Path),
              help="qa_one_turn.jsonl (default: $PROBEGUARD_SHARED_DATA/halueval/ or ../shared/data/halueval/).")
@click.option("--n-docs", type=int, default=250, show_default=True)
@click.option("--n-queries", type=int, default=50, show_default=True)
@click.option("--seed", type=int, default=42, show_default=True)
@click.option("--generators", default="extractive,smollm2", show_default=True,
              help="Comma-separated: extractive, smollm2.")
@click.option("--concurrency", type=int, default=4, show_default=True)
@click.option("--chunk-size", type=int, default=128, show_default=True,
              help="Token-window chunk size of the reference pipeline.")
@click.option("--chunk-overlap", type=int, default=32, show_default=True)
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("runs/bench-hotpotqa"), show_default=True)
def bench_hotpotqa(data_file: Path | None, n_docs: int, n_queries: int, seed: int,
                   generators: str, concurrency: int, chunk_size: int, chunk_overlap: int,
                   out_dir: Path) -> None:
    """The four probes, FCS and standard evaluation on HotpotQA, per generator."""
    from probeguard.bench.hotpotqa import default_data_file, render_table, run_hotpotqa

    path = data_file or default_data_file()
    if not path.is_file():
        click.echo(f"skipped: HotpotQA data not found at {path} (give --data or set "
                   "PROBEGUARD_SHARED_DATA to the folder that holds halueval/)")
        return
    names = [g.strip() for g in generators.split(",") if g.strip()]
    try:
        with _progress_bar(disabled=False) as progress:
            chunker = {"name": "tokens", "size": chunk_size, "overlap": chunk_overlap}
            rows = run_hotpotqa(path, out_dir, n_docs=n_docs, n_queries=n_queries, seed=seed,
                                generators=names, concurrency=concurrency,
                                reference={"chunker": chunker},
                                progress=lambda _name, done, total: progress(done, total))
    except ProbeGuardError as exc:
        _fail(str(exc))
        return
    table = render_table(rows, n_docs=n_docs, n_queries=n_queries, seed=seed)
    from probeguard.io import atomic_write_text

    atomic_write_text(out_dir / "bench.md", table)
    click.echo(table)
    click.echo(f"runs: {', '.join(str(r.run_dir) for r in rows)}; table: {out_dir / 'bench.md'}")


@cli.command()
def schema() -> None:
    """Print the JSON schema of run.json (the RunLog model)."""
    from probeguard.log.models import RunLog

    click.echo(json.dumps(RunLog.model_json_schema(), indent=2, sort_keys=True))


def main() -> None:
    cli()


if __name__ == "__main__":
    main()

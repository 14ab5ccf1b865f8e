"""The ``probeguard`` command: a thin layer over the public API. The CLI prints; the library
returns values and logs."""

from __future__ import annotations

import json
import logging
import math
import sys
from pathlib import Path
from typing import Any

import click

from probeguard._version import __version__
from probeguard.cli.bench import bench
from probeguard.cli.common import (
    OneLineErrors,
    fail,
    gate_options,
    progress_bar,
    scan_config,
    scan_options,
)
from probeguard.cli.dataset import dataset
from probeguard.cli.dataset_selftest import selftest_command
from probeguard.cli.dataset_synth import synth_command
from probeguard.cli.gate import compare_command, gate_after_scan, gate_policy
from probeguard.cli.init import init
from probeguard.config.loading import load_config, locate_in_file
from probeguard.core.errors import InputError, ProbeGuardError
from probeguard.core.sanitize import visible_controls
from probeguard.engine.evaluate import evaluate
from probeguard.engine.fixes import parse_patch_option, verify_fixes, write_fix
from probeguard.engine.registry import parts
from probeguard.engine.reports import write_reports
from probeguard.engine.scan import scan as run_scan
from probeguard.engine.sweep import sweep_backends
from probeguard.metrics.thresholds import parse_threshold
from probeguard.probes.models import SkippedProbe
from probeguard.reports.fix_markdown import short_estimate
from probeguard.reports.markdown import adversarial_rate, not_run_reason
from probeguard.results import ARTIFACTS, json_schema
from probeguard.results.run import load_run_log


@click.group(cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="probeguard")
@click.option("-v", "--verbose", count=True, help="More log output (-v info, -vv debug).")
def cli(verbose: int) -> None:
    """ProbeGuard: find a RAG pipeline's failures before its users do."""
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


@cli.command()
@scan_options
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Run directory (default: runs/demo with --demo, else runs/latest).",
)
@click.option("--resume", is_flag=True, help="Skip the cases an interrupted run finished.")
@gate_options
def scan(
    demo: bool,
    config_path: Path | None,
    out_dir: Path | None,
    resume: bool,
    seed: int | None,
    concurrency: int | None,
    no_cache: bool,
    cache_dir: Path | None,
    no_progress: bool,
    baseline: Path | None,
    gate_path: Path | None,
    max_error_rate: float | None,
    allow_different_corpus: bool,
) -> None:
    """Run a scan and write run.jsonl, run.json and report.md. With --baseline RUN, compare
    with that run and gate (OUT/compare/); with --gate FILE (or gate: in the config), apply
    the gate's limits. Exit 0 pass, 1 gate failed, 2 bad input, 3 run incomplete (every
    case errored, or errors above --max-error-rate)."""

    out = out_dir or Path("runs/demo" if demo else "runs/latest")
    try:
        config = scan_config(demo, config_path, seed, concurrency, no_cache, cache_dir)
        policy = gate_policy(config, gate_path, max_error_rate)
        with progress_bar(disabled=no_progress) as progress:
            result = run_scan(config, out, resume=resume, progress=progress)
    except ProbeGuardError as exc:
        if isinstance(exc, InputError):
            exc = locate_in_file(exc, config_path)
        fail(str(exc))
        return
    stats = result.run.stats
    click.echo(
        f"{stats.cases} cases: {stats.calls} pipeline calls, {stats.cache_hits} cache hits, "
        f"{stats.resumed} resumed, {stats.retries} retries, {stats.errors} errors "
        f"({stats.wall_s:.1f} s)"
    )

    synth = result.run.synthesized
    if synth is not None:
        click.echo(
            f"  no golden questions given: synthesized {synth.golden} golden questions and "
            f"{synth.attacks} attack cases from the corpus (seed {synth.seed})"
        )
    golden = result.run.summary.golden
    if golden:
        for key in ("retrieval_hit_at_k", "mrr", "answer_contains", "pass_rate"):
            click.echo(f"  {key:<20} {getattr(golden, key).format(3)}")
    probes = result.run.summary.probes or {}
    for name, summary in probes.items():
        shown = (
            "skipped: " + summary.skipped
            if isinstance(summary, SkippedProbe)
            else summary.failure_rate.format(3)
            if summary.failure_rate.n
            else "not run: " + not_run_reason(summary.groups, summary.unscored)
        )
        click.echo(f"  probe {name:<22} {shown}")
    fcs = result.run.summary.fcs
    if fcs:
        value = fcs.value
        if fcs.empirical is not None:
            click.echo(f"  empirical FCS {fcs.empirical.value.format(3)} (failing questions)")
        click.echo(
            f"  FCS {'n/a' if math.isnan(value) else f'{value:.3f}'}; "
            f"adversarial failure rate {adversarial_rate(result.run, fcs.adversarial_failure_rate)}"
        )
    attribution = result.run.summary.attribution
    if attribution and attribution.failures:
        causes = ", ".join(f"{cause} {n}" for cause, n in attribution.causes.items() if n)
        click.echo(
            f"  causes of {attribution.attributed} attributed failures: {causes}; "
            f"verify the fixes with: probeguard fix {result.out_dir}"
        )
        if attribution.mechanisms:  # None in run logs older than mechanisms
            mechanisms = ", ".join(f"{m} {n}" for m, n in attribution.mechanisms.items())
            click.echo(f"  mechanisms: {mechanisms}")
    click.echo(f"report: {result.report_path}")
    click.echo(f"html report: {result.html_path}")
    click.echo(f"run log: {result.run_path}")
    try:
        code = gate_after_scan(
            result.run,
            result.out_dir,
            policy=policy,
            baseline=baseline,
            gated=gate_path is not None or config.gate is not None,
            allow_different_corpus=allow_different_corpus,
        )
    except ProbeGuardError as exc:
        fail(str(exc))
        return
    if code:
        sys.exit(code)


@cli.command(name="list")
@click.argument(
    "kind",
    required=False,
    type=click.Choice(
        [
            "chunkers",
            "embedders",
            "retrievers",
            "rerankers",
            "generators",
            "pipelines",
            "prompts",
            "probes",
        ]
    ),
)
def list_parts(kind: str | None) -> None:
    """List the parts a pipeline is assembled from, the pipeline kinds, and the probes."""

    try:
        listed = parts()
    except ProbeGuardError as exc:  # e.g. a third-party probe that cannot load
        fail(str(exc))
        return
    for group, names in listed.items():
        if kind is None or kind == group:
            click.echo(f"{group}:")
            for name, doc in names.items():
                click.echo(f"  {name:<24} {doc}")


@cli.command()
@scan_options
@click.option(
    "--backends",
    default="dense,bm25,hybrid",
    show_default=True,
    help="Comma-separated retrieval backends of the reference pipeline.",
)
@click.option(
    "--min-score", type=float, help="Gate every backend at this retrieval score (default: no gate)."
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("runs/backends"),
    show_default=True,
)
def sweep(
    demo: bool,
    config_path: Path | None,
    seed: int | None,
    concurrency: int | None,
    no_cache: bool,
    cache_dir: Path | None,
    no_progress: bool,
    backends: str,
    min_score: float | None,
    out_dir: Path,
) -> None:
    """Scan once per retrieval backend and compare them side by side (with the min_score
    gate's behaviour on each): writes OUT/<backend>/, OUT/comparison.md and OUT/comparison.html."""

    names = [b.strip() for b in backends.split(",") if b.strip()]
    try:
        config = scan_config(demo, config_path, seed, concurrency, no_cache, cache_dir)
        with progress_bar(disabled=no_progress) as progress:
            result = sweep_backends(
                config,
                out_dir,
                backends=names,
                min_score=min_score,
                progress=lambda _b, done, total: progress(done, total),
            )
    except ProbeGuardError as exc:
        if isinstance(exc, InputError):
            exc = locate_in_file(exc, config_path)
        fail(str(exc))
        return
    click.echo(result.report_path.read_text(encoding="utf-8"))
    click.echo(
        f"comparison: {result.report_path}; runs: "
        f"{', '.join(str(r.out_dir) for r in result.runs.values())}"
    )
    click.echo(f"html report: {result.report_path.with_suffix('.html')}")


@cli.command(name="eval")
@click.argument("dataset", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for eval.json and eval.md.",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A YAML config (judge, eval.thresholds, and the pipeline for records without an answer).",
)
@click.option(
    "--demo",
    is_flag=True,
    help="Records without an answer are answered by the reference pipeline over "
    "the bundled demo corpus.",
)
@click.option(
    "--threshold",
    "thresholds",
    multiple=True,
    metavar="METRIC=VALUE",
    help="Least acceptable mean, e.g. faithfulness=0.9 (or METRIC=off); repeatable.",
)
@click.option("--seed", type=int, help="Seed of the bootstrap intervals (default 0).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the response cache.")
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
def eval_command(
    dataset: Path,
    out_dir: Path,
    config_path: Path | None,
    demo: bool,
    thresholds: tuple[str, ...],
    seed: int | None,
    no_cache: bool,
    no_progress: bool,
) -> None:
    """Score DATASET (CSV, XLSX, JSON or JSONL records: input, answer, groundTruth,
    retrievalContext, retrievalRelevance, tags) with the standard RAG metrics; write
    OUT/eval.json and OUT/eval.md. Exit 0 when every threshold passes, 1 when one fails,
    2 on bad input."""

    overrides: dict[str, Any] = {"demo": True} if demo else {}
    if seed is not None:
        overrides["seed"] = seed
    if no_cache:
        overrides["runner"] = {"cache_dir": None}
    chosen: dict[str, float | None] = {}
    for text in thresholds:
        try:
            name, value = parse_threshold(text)
        except ValueError as exc:
            fail(f"--threshold: {exc}")
            return
        chosen[name] = value
    if chosen:
        overrides["eval"] = {"thresholds": chosen}
    try:
        config = load_config(config_path, overrides=overrides)
        with progress_bar(disabled=no_progress) as progress:
            result = evaluate(config, dataset, out_dir, progress=progress)
    except ProbeGuardError as exc:
        if isinstance(exc, InputError):
            exc = locate_in_file(exc, config_path)
        fail(str(exc))
        return
    data = result.artifact
    click.echo(f"{data.summary.records} records, {data.errors} errors")
    for name, entry in data.summary.metrics.items():
        mean = entry.mean
        shown = (
            "n/a"
            if math.isnan(mean.value)
            else f"{mean.value:.3f} [{mean.low:.3f}, {mean.high:.3f}]"
        )
        check = data.thresholds.checks.get(name)
        status = f"  {check.status} (≥ {check.threshold:.2f})" if check else ""
        click.echo(f"  {name:<22} {shown} n={mean.n} unscored={entry.unscored}{status}")
    click.echo(f"report: {result.report_path}")
    click.echo(f"html report: {result.html_path}")
    click.echo(f"results: {result.json_path}")
    if not result.passed:
        click.echo("FAILED: below threshold: " + ", ".join(data.thresholds.failed), err=True)
        sys.exit(1)


@cli.command(name="fix")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The scan's config file, instead of the one recorded in run.json (needed "
    "when the recorded one has redacted secrets).",
)
@click.option(
    "--combined",
    is_flag=True,
    help="Also verify the fixes that help on their own, applied together.",
)
@click.option(
    "--patch",
    "patch_items",
    multiple=True,
    metavar="PATH=VALUE",
    help="Also verify a fix of your own, e.g. "
    "'pipeline.reference.defences.gate={hybrid: 0.02}' (VALUE is YAML); "
    "repeatable, all together make one fix.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for fix.json, fix.md and fix.html (default RUN_DIR/fix).",
)
@click.option("--no-cache", is_flag=True, help="Do not read or write the response cache.")
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Response cache folder (default: the scan's).",
)
@click.option(
    "--fail-on-unverified",
    is_flag=True,
    help="Exit 1 when a fix that could be verified is not (for CI).",
)
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
def fix_command(
    run_dir: Path,
    config_path: Path | None,
    combined: bool,
    patch_items: tuple[str, ...],
    out_dir: Path | None,
    no_cache: bool,
    cache_dir: Path | None,
    fail_on_unverified: bool,
    no_progress: bool,
) -> None:
    """Verify the fixes a scan recommends: apply each to the reference pipeline's config,
    re-run the failures it targets and the benign controls, and report the failure rate
    before and after (Wilson intervals) and the new false refusals. Writes
    OUT/fix.json, OUT/fix.md and OUT/fix.html. Exit 0, 1 with --fail-on-unverified when a fix is not
    verified, 2 on bad input."""

    out = out_dir or run_dir / "fix"
    try:
        patches = dict(parse_patch_option(item) for item in patch_items)
        config = load_config(config_path) if config_path is not None else None
        cache: Any = None if no_cache else (cache_dir if cache_dir is not None else "recorded")
        with progress_bar(disabled=no_progress) as progress:
            result = verify_fixes(
                run_dir,
                config=config,
                combined=combined,
                patches=patches or None,
                cache_dir=cache,
                progress=lambda _fix, done, total: progress(done, total),
            )
    except ProbeGuardError as exc:
        fail(str(exc))
        return
    data = result.artifact
    json_path, report_path = write_fix(result, out)
    if out_dir is None:  # fix.json where the run's reports look for it: show the effects
        write_reports(load_run_log(run_dir), run_dir)
    click.echo(
        f"{data.failures} failures, {data.attributed} attributed; "
        f"{len(data.fixes)} fixes; {result.calls} pipeline calls, "
        f"{result.cache_hits} cache hits"
    )
    for f in data.fixes:
        click.echo(f"{f.id:<9} {f.verdict:<20} {f.title}")
        if f.targeted is not None and f.benign is not None:
            t, b = f.targeted, f.benign
            click.echo(
                f"{'':<9} targeted failures {short_estimate(t.before)} -> "
                f"{short_estimate(t.after)} ({t.repaired}/{t.n} repaired); "
                f"false refusal {short_estimate(b.false_refusal.before)} -> "
                f"{short_estimate(b.false_refusal.after)} "
                f"({len(b.new_false_refusals)} new of {b.n})"
            )
        else:
            click.echo(f"{'':<9} {visible_controls(f.reason)}")
    click.echo(f"report: {report_path}")
    click.echo(f"html report: {report_path.with_suffix('.html')}")
    click.echo(f"results: {json_path}")
    unverified = [f.id for f in data.fixes if f.verdict not in ("verified", "not_applicable")]
    if fail_on_unverified and unverified:
        click.echo("FAILED: fixes not verified: " + ", ".join(unverified), err=True)
        sys.exit(1)


@cli.command()
@click.argument("kind", required=False, default="run", type=click.Choice(list(ARTIFACTS)))
def schema(kind: str) -> None:
    """Print the JSON schema of an artefact: run (run.json, the default), eval (eval.json),
    fix (fix.json), sweep (comparison.json), bench (bench poisonedrag's bench.json),
    bench-judge (bench judge's bench.json), bench-judges (bench judges' bench.json),
    bench-qasper, bench-squad, bench-rgb, bench-clapnq (those benches' bench.json) or compare
    (compare.json)."""

    click.echo(json.dumps(json_schema(kind), indent=2, sort_keys=True))


cli.add_command(bench)
cli.add_command(compare_command)
dataset.add_command(synth_command)
dataset.add_command(selftest_command)
cli.add_command(dataset)
cli.add_command(init)


def main() -> None:
    cli()


if __name__ == "__main__":
    main()

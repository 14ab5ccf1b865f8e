"""The release gate on the command line: ``probeguard compare``, and what ``scan --baseline``,
``--gate`` and ``--max-error-rate`` do after a scan. Exit codes: 0 pass, 1 the gate failed,
2 bad input, 3 the run is incomplete (every case errored, or errors above the limit)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from probeguard.cli.common import fail
from probeguard.config.gate import GatePolicy
from probeguard.config.loading import load_gate_policy
from probeguard.config.models import ScanConfig
from probeguard.core.errors import InputError, ProbeGuardError
from probeguard.core.io import atomic_write_text
from probeguard.engine.compare import append_step_summary, compare, compare_runs, write_compare
from probeguard.engine.gate import completeness_check, gate_run
from probeguard.reports.compare_markdown import gate_summary
from probeguard.reports.junit import gate_junit
from probeguard.results.compare import CompareArtifact, GateOutcome
from probeguard.results.run import RunLog, load_run_log

__all__ = ["compare_command", "gate_after_scan", "gate_policy"]

STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def gate_policy(
    config: ScanConfig | None, gate_path: Path | None, max_error_rate: float | None
) -> GatePolicy:
    """``--gate FILE``, else the config's ``gate:``, else the defaults; ``--max-error-rate``
    on top."""
    if gate_path is not None:
        policy = load_gate_policy(gate_path)
    elif config is not None and config.gate is not None:
        policy = config.gate
    else:
        policy = GatePolicy()
    if max_error_rate is not None:
        if not 0.0 <= max_error_rate <= 1.0:
            raise InputError(
                f"must be between 0 and 1, got {max_error_rate:g}", field="--max-error-rate"
            )
        policy = policy.model_copy(update={"max_error_rate": max_error_rate})
    return policy


def echo_gate(gate: GateOutcome) -> None:
    """The verdict and each failed check (on stderr when it did not pass)."""
    failed = [c for c in gate.checks if not c.passed]
    click.echo(
        f"gate: {gate.status} (exit {gate.exit_code}); {len(gate.checks)} checks, "
        f"{len(failed)} failed",
        err=bool(failed),
    )
    for check in failed:
        click.echo(f"  FAILED {check.id}: {check.message}", err=True)
        for unit in check.units[:20]:
            click.echo(f"    {unit}", err=True)
        if len(check.units) > 20:
            click.echo(f"    ... and {len(check.units) - 20} more", err=True)


def report_comparison(artifact: CompareArtifact, out: Path) -> None:
    """Print the comparison's outcome, append the step summary when in a GitHub job."""
    fixed = sum(1 for c in artifact.changes if c.change == "fixed")
    new = len(artifact.changes) - fixed
    click.echo(f"compared: {new} new failures, {fixed} fixed")
    for note in artifact.notes:
        click.echo(f"  note: {note}")
    summary_path = os.environ.get(STEP_SUMMARY_ENV)
    if summary_path:
        append_step_summary(artifact, summary_path)
    click.echo(f"report: {out / 'compare.md'}")
    click.echo(f"html report: {out / 'compare.html'}")
    click.echo(f"junit: {out / 'junit.xml'}")
    echo_gate(artifact.gate)


@click.command(name="compare")
@click.argument("baseline", type=click.Path(path_type=Path))
@click.argument("candidate", type=click.Path(path_type=Path))
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for compare.json, compare.md, compare.html and junit.xml.",
)
@click.option(
    "--gate",
    "gate_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A YAML gate policy (its top level, or a config file's gate: section).",
)
@click.option(
    "--max-error-rate", type=float, help="Above this share of errored cases: incomplete (exit 3)."
)
@click.option(
    "--allow-different-corpus",
    is_flag=True,
    help="Pair the runs even when their corpus fingerprints differ.",
)
def compare_command(
    baseline: Path,
    candidate: Path,
    out_dir: Path,
    gate_path: Path | None,
    max_error_rate: float | None,
    allow_different_corpus: bool,
) -> None:
    """Compare a CANDIDATE run with an approved BASELINE run (run directories or run.json
    files) on the same cases: new failures, fixed, exact McNemar tests with Holm correction,
    paired bootstrap differences, and the gate. Exit 0 pass, 1 gate failed, 2 bad input,
    3 candidate run incomplete."""

    try:
        policy = gate_policy(None, gate_path, max_error_rate)
        result = compare(
            baseline,
            candidate,
            out_dir,
            policy=policy,
            allow_different_corpus=allow_different_corpus,
        )
    except ProbeGuardError as exc:
        fail(str(exc))
        return
    report_comparison(result.artifact, out_dir)
    sys.exit(result.exit_code)


def gate_after_scan(
    run: RunLog,
    out_dir: Path,
    *,
    policy: GatePolicy,
    baseline: Path | None,
    gated: bool,
    allow_different_corpus: bool = False,
) -> int:
    """After a scan: compare with ``baseline`` (into OUT/compare/), or apply the policy to the
    run alone when ``gated``, or only check that the run is complete. The exit code."""
    if baseline is not None:
        artifact = compare_runs(
            load_run_log(baseline),
            run,
            policy=policy,
            paths=(str(baseline), str(out_dir)),
            allow_different_corpus=allow_different_corpus,
        )
        write_compare(artifact, out_dir / "compare")
        report_comparison(artifact, out_dir / "compare")
        return artifact.gate.exit_code
    if not gated:
        check = completeness_check(run.stats.cases, run.stats.errors, policy.max_error_rate)
        if check.passed:
            return 0
        click.echo(f"run incomplete (exit 3): {check.message}", err=True)
        return 3
    gate = gate_run(run, policy, str(out_dir))
    atomic_write_text(out_dir / "junit.xml", gate_junit(gate))
    summary_path = os.environ.get(STEP_SUMMARY_ENV)
    if summary_path:
        with Path(summary_path).open("a", encoding="utf-8") as handle:
            handle.write(gate_summary(gate, str(out_dir)))
    echo_gate(gate)
    return gate.exit_code

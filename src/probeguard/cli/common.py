"""What the ``probeguard`` commands share: the error exit, the scan options and config,
and the progress bar."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from probeguard.config.loading import load_config
from probeguard.core.sanitize import one_line

__all__ = [
    "OneLineErrors",
    "fail",
    "gate_options",
    "progress_bar",
    "scan_config",
    "scan_options",
]


def fail(message: str) -> None:
    """Bad input: one line on stderr, exit 2 (no traceback, no usage block)."""
    click.echo(f"error: {one_line(message)}", err=True)
    sys.exit(2)


_NO_ARGS_IS_HELP: type[click.ClickException] = getattr(
    click.exceptions, "NoArgsIsHelpError", type("_Never", (click.ClickException,), {})
)


class OneLineErrors(click.Group):
    """A command group whose usage errors (a bad flag value, a missing argument) end like
    every other bad input: one ``error:`` line naming the flag, exit 2. Everything else
    (``--help``, ``--version``, a command's own exit code) behaves as in click."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        try:
            result = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _NO_ARGS_IS_HELP as exc:  # a bare group: its help, as click shows it
            exc.show()
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            ctx = getattr(exc, "ctx", None)  # usage errors carry the command's context
            command = ctx.command_path if ctx is not None else "probeguard"
            fail(f"{command}: {exc.format_message()} (see --help)")
            return None
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        if standalone_mode:
            sys.exit(result if isinstance(result, int) else 0)
        return result


def scan_config(
    demo: bool,
    config_path: Path | None,
    seed: int | None,
    concurrency: int | None,
    no_cache: bool,
    cache_dir: Path | None,
) -> Any:
    """The scan config from the file (or the demo's defaults) with the CLI's overrides."""

    if not demo and config_path is None:
        fail("give --demo or --config FILE")
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
    return load_config(config_path, overrides=overrides)


_SCAN_OPTIONS = [
    click.option("--demo", is_flag=True, help="Scan the bundled demo corpus and golden questions."),
    click.option(
        "--config",
        "config_path",
        type=click.Path(dir_okay=False, path_type=Path),
        help="A YAML scan config.",
    ),
    click.option("--seed", type=int, help="Seed for every random choice (default 0)."),
    click.option("--concurrency", type=int, help="Pipeline calls in flight at once."),
    click.option("--no-cache", is_flag=True, help="Do not read or write the response cache."),
    click.option(
        "--cache-dir",
        type=click.Path(file_okay=False, path_type=Path),
        help="Response cache folder (default .probeguard-cache).",
    ),
    click.option("--no-progress", is_flag=True, help="Hide the progress bar."),
]


def scan_options(func: Any) -> Any:
    for option in reversed(_SCAN_OPTIONS):
        func = option(func)
    return func


_GATE_OPTIONS = [
    click.option(
        "--baseline",
        type=click.Path(path_type=Path),
        help="An approved run (directory or run.json) to compare with and gate against.",
    ),
    click.option(
        "--gate",
        "gate_path",
        type=click.Path(dir_okay=False, path_type=Path),
        help="A YAML gate policy (its top level, or a config file's gate: section).",
    ),
    click.option(
        "--max-error-rate",
        type=float,
        help="Above this share of errored cases the run is incomplete (exit 3).",
    ),
    click.option(
        "--allow-different-corpus",
        is_flag=True,
        help="Compare with a baseline whose corpus fingerprint differs.",
    ),
]


def gate_options(func: Any) -> Any:
    """The release gate's options of ``scan``."""
    for option in reversed(_GATE_OPTIONS):
        func = option(func)
    return func


class progress_bar:
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

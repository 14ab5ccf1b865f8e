"""``probeguard dataset``: the dataset commands' group (each subcommand in its own module)."""

from __future__ import annotations

import click

__all__ = ["dataset"]


@click.group()
def dataset() -> None:
    """Make and check datasets of cases (golden questions and attack cases)."""

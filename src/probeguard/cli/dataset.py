"""``probeguard dataset``: the commands over case files (schema, validate, split, manifest,
import). Each is a thin layer over ``probeguard.dataset``; bad input exits 2 with one message
naming the file, line and field."""

from __future__ import annotations

import click

__all__ = ["dataset"]


@click.group()
def dataset() -> None:
    """Case files: export the schema, validate, split, write a manifest, import."""

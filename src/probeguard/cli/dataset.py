"""``probeguard dataset``: the commands over case files (schema, validate, split, manifest,
import). Each is a thin layer over ``probeguard.dataset``; bad input exits 2 with one message
naming the file, line and field."""

from __future__ import annotations

import json

import click

from probeguard.dataset.schema import case_json_schema

__all__ = ["dataset"]


@click.group()
def dataset() -> None:
    """Case files: export the schema, validate, split, write a manifest, import."""


@dataset.command(name="schema")
def schema_command() -> None:
    """Print the JSON schema of one case record (the dataset JSONL format)."""
    click.echo(json.dumps(case_json_schema(), indent=2, sort_keys=True))

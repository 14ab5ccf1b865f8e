"""`probeguard list`: its help describes what it lists today."""

from __future__ import annotations

from click.testing import CliRunner

from probeguard.cli.main import cli


def test_list_help_does_not_promise_later_parts() -> None:
    result = CliRunner().invoke(cli, ["list", "--help"])
    assert result.exit_code == 0
    assert "later" not in result.output
    assert "probes" in result.output


def test_list_probes_lists_the_probes() -> None:
    result = CliRunner().invoke(cli, ["list", "probes"])
    assert result.exit_code == 0
    assert "corpus_poisoning" in result.output

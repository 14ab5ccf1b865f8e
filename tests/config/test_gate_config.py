"""The gate policy in a scan config (``gate:``) and in a file of its own: defaults, and bad
values named by file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from probeguard.config import GatePolicy, load_config, load_gate_policy
from probeguard.core.errors import InputError


def test_no_gate_by_default_and_none_recorded() -> None:
    config = load_config(environ={})
    assert config.gate is None and "gate" not in config.recorded()


def test_a_gate_section_is_validated_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "scan.yaml"
    path.write_text(
        "demo: true\ngate:\n  alpha: 0.1\n  limits:\n    - {slice: 'tag:*', bound: top}\n"
    )
    with pytest.raises(InputError) as err:
        load_config(path, environ={})
    assert (err.value.line, err.value.field) == (5, "gate.limits.0.bound")
    path.write_text("demo: true\ngate:\n  alpha: 0.1\n  max_error_rate: 0.05\n")
    gate = load_config(path, environ={}).gate
    assert gate == GatePolicy(alpha=0.1, max_error_rate=0.05)
    assert load_gate_policy(path) == gate  # a config file's gate: section is a gate file too


def test_a_gate_file_at_top_level(tmp_path: Path) -> None:
    path = tmp_path / "gate.yaml"
    path.write_text("limits:\n  - slice: probe:prompt_hijack\n    max_new_failures: -1\n")
    with pytest.raises(InputError) as err:
        load_gate_policy(path)
    assert (err.value.file, err.value.line) == (str(path), 3)
    assert err.value.field == "limits.0.max_new_failures"
    path.write_text("[1, 2]\n")
    with pytest.raises(InputError, match="mapping"):
        load_gate_policy(path)

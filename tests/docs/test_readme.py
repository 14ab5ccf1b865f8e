"""The README's Python examples and the package docstring's example run as written, offline,
in a temporary folder holding the README's ``probeguard.yaml``."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

import probeguard

README = Path(__file__).parents[2] / "README.md"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks(lang: str) -> list[str]:
    return [body for kind, body in FENCE.findall(README.read_text()) if kind == lang]


def write_config_files(folder: Path) -> None:
    """Each YAML block whose first line is ``# NAME.yaml`` becomes that file."""
    for body in blocks("yaml"):
        first = body.splitlines()[0]
        if re.fullmatch(r"# [\w.-]+\.ya?ml", first):
            (folder / first[2:]).write_text(body)


def docstring_example() -> str:
    """The indented code of ``probeguard.__doc__``."""
    doc = probeguard.__doc__ or ""
    code = [line for line in doc.splitlines() if line.startswith("    ")]
    return textwrap.dedent("\n".join(code))


def test_the_public_api_gives_the_functions() -> None:
    from probeguard import load_config, scan

    assert callable(scan) and callable(load_config)
    assert scan.__module__ == "probeguard.engine.scan"
    assert load_config.__module__ == "probeguard.config.loading"


def test_the_readme_has_python_examples() -> None:
    assert len(blocks("python")) >= 3
    assert "scan(load_config" in docstring_example()


@pytest.mark.slow  # several small demo scans
@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_readme_python_block_runs(index, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_config_files(tmp_path)
    exec(compile(blocks("python")[index], f"README.md python block {index}", "exec"), {})


@pytest.mark.slow  # a small demo scan
def test_package_docstring_example_runs(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_config_files(tmp_path)
    exec(compile(docstring_example(), "probeguard.__doc__", "exec"), {})
    assert (tmp_path / "runs" / "mine" / "report.md").is_file()

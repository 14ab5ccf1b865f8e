"""Every extra that the docs, the docstrings or a ``MissingExtraError`` names exists in
``pyproject.toml``, and the adapters' docstring names only adapters that exist (it once
promised ``llamaindex`` and ``chroma`` adapters that did not)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[3]
NAMED = re.compile(r'probeguard\[([a-z0-9,_-]+)\]|MissingExtraError\(\s*"([a-z0-9_-]+)"')


def extras() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return set(project["optional-dependencies"])


def named(text: str) -> set[str]:
    out: set[str] = set()
    for bracket, error in NAMED.findall(text):
        out.update(p.strip() for p in (bracket or error).split(","))
    return out


def test_every_named_extra_exists() -> None:
    files = [ROOT / "README.md", *sorted((ROOT / "src" / "probeguard").rglob("*.py"))]
    missing = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in files
        for name in named(path.read_text(encoding="utf-8"))
        if name not in extras()
    }
    assert not missing, sorted(missing)


def test_the_adapters_docstring_names_only_adapters_that_exist() -> None:
    doc = (ROOT / "src/probeguard/pipeline/adapters/__init__.py").read_text()
    assert "chroma" not in doc.lower()
    for adapter in ("langchain", "llamaindex"):
        assert f"probeguard[{adapter}]" in doc and adapter in extras()
        assert (ROOT / f"src/probeguard/pipeline/adapters/{adapter}.py").is_file()

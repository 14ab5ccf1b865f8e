"""Shared fixtures. Tests run offline; data from ../shared/data is found through
PROBEGUARD_SHARED_DATA (set by `make test`) and tests that need it skip when it is absent.

The demo scans several modules read are built once per test session (and only when a test
asks for them): `demo_cli_runs` (the real `probeguard scan --demo`, twice) and
`fix_scan_run` (the small hashing-embedder scan that fix verification starts from). Tests
read them as they are; a test that writes into a run directory copies it first
(`shutil.copytree`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from probeguard.cli.main import cli
from probeguard.config.models import ScanConfig
from probeguard.engine.scan import scan

ROOT = Path(__file__).resolve().parents[1]

# --import-mode=importlib: shared scaffolding in tests/testkit.py is imported as `testkit`.
if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    path = Path(os.environ.get("PROBEGUARD_SHARED_DATA", ROOT.parent / "shared" / "data"))
    if not path.is_dir():
        pytest.skip(f"shared benchmark data not found at {path} (set PROBEGUARD_SHARED_DATA)")
    return path


@pytest.fixture(autouse=True)
def _no_probeguard_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's PROBEGUARD_* variables must not leak into tests."""
    for name in list(os.environ):
        if name.startswith("PROBEGUARD_") and name != "PROBEGUARD_SHARED_DATA":
            monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def demo_cli_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Result, Result]:
    """`probeguard scan --demo` (real MiniLM embeddings) into ``base/a``, then again into
    ``base/b`` with the same cache: ``(base, first, second)``. Read-only."""
    base = tmp_path_factory.mktemp("demo")
    runner = CliRunner()
    cache = base / "cache"
    first = runner.invoke(
        cli, ["scan", "--demo", "--out", str(base / "a"), "--cache-dir", str(cache)]
    )
    second = runner.invoke(
        cli, ["scan", "--demo", "--out", str(base / "b"), "--cache-dir", str(cache)]
    )
    return base, first, second


def fix_scan_config(cache: Path) -> ScanConfig:
    """The demo corpus through the hashing embedder and the extractive generator, with
    prompt_hijack (one style) and benign_control: a scan with fixes to verify."""
    return ScanConfig(
        demo=True,
        runner={"cache_dir": str(cache)},
        metrics={"standard": False},
        pipeline={"reference": {"embedder": {"name": "hashing", "dim": 1024}}},
        probes={
            "enabled": ["prompt_hijack", "benign_control"],
            "settings": {
                "prompt_hijack": {"styles": ["direct"], "reruns": 0},
                "benign_control": {"planted": 1},
            },
        },
    )


@pytest.fixture(scope="session")
def fix_scan_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run directory of a `fix_scan_config` scan (its cache beside it). Read-only: copy
    it before verifying fixes, which writes ``fix/`` into the run directory."""
    base = tmp_path_factory.mktemp("fixscan")
    scan(fix_scan_config(base / "cache"), base / "run")
    return base / "run"

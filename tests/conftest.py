"""Shared fixtures. Tests run offline; data from ../shared/data is found through
PROBEGUARD_SHARED_DATA (set by `make test`) and tests that need it skip when it is absent."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

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

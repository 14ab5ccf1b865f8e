"""The allocator's seam of a scan (issue 18, ``engine.malloc``): glibc's arenas capped
before the scan starts threads, unless the user set ``MALLOC_ARENA_MAX``."""

from __future__ import annotations

import ctypes.util
import platform

import pytest

import probeguard.engine.scan as scan_module
from probeguard.engine.malloc import limit_malloc_arenas

glibc = pytest.mark.skipif(
    platform.libc_ver()[0] != "glibc" or ctypes.util.find_library("c") is None,
    reason="mallopt(M_ARENA_MAX) is glibc's",
)


@glibc
def test_the_cap_is_set_on_glibc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert limit_malloc_arenas() is True


def test_a_users_own_setting_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert limit_malloc_arenas() is False


def test_scan_caps_the_arenas_before_it_starts() -> None:
    """Wiring: ``scan`` itself calls the cap (before ``_scan`` builds anything)."""
    assert scan_module.limit_malloc_arenas is limit_malloc_arenas
    assert "limit_malloc_arenas" in scan_module.scan.__code__.co_names

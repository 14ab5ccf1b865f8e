"""core.io: atomic writes land with the mode an ordinary ``open()`` would give them."""

from __future__ import annotations

import os
import stat

import pytest

from probeguard.core.io import atomic_write_text, current_umask


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_atomic_write_respects_the_umask_like_open(tmp_path, mask) -> None:
    old = os.umask(mask)
    try:
        assert current_umask() == mask
        written = atomic_write_text(tmp_path / "report.md", "x\n")
        with open(tmp_path / "plain.txt", "w") as fh:  # what run.jsonl gets
            fh.write("x\n")
    finally:
        os.umask(old)
    mode = stat.S_IMODE(written.stat().st_mode)
    assert mode == 0o666 & ~mask
    assert mode == stat.S_IMODE((tmp_path / "plain.txt").stat().st_mode)
    assert written.read_text() == "x\n"
    assert not list(tmp_path.glob(".report.md.*"))

"""Crash and resume (issue 17): a real ``probeguard scan`` subprocess is killed with SIGKILL
after a seeded random number of its cases are logged, then resumed with ``--resume``; its
``run.json`` must equal an uninterrupted run's, apart from run statistics (``stats``, each
record's time, cache flag and attempts). ``summary`` included: the attribution's call count,
which depends on what was resumed, lives in ``stats``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from fuzz.fuzzkit import PROBEGUARD, run_subprocess, subprocess_env, without_statistics

CONFIG = """\
demo: true
pipeline: {reference: {embedder: {name: hashing, dim: 1024}, retriever: {name: bm25}}}
metrics: {standard: false}
probes:
  enabled: [prompt_hijack, unanswerable]
  settings: {prompt_hijack: {styles: [direct], reruns: 0}}
runner: {concurrency: 2}
"""
KILLS = 3


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except OSError:
        return 0


def _scan_args(config: Path, out: Path, *extra: str) -> list[str]:
    return ["scan", "--config", str(config), "--out", str(out), "--no-cache", *extra]


def _kill_after(args: list[str], log: Path, lines: int) -> bool:
    """Start ``probeguard ARGS``, SIGKILL it once ``log`` holds ``lines`` lines; whether it
    was killed before it finished."""
    proc = subprocess.Popen(
        [*PROBEGUARD, *args],
        env=subprocess_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while proc.poll() is None and _lines(log) < lines:
            time.sleep(0.005)
        killed = proc.poll() is None
        if killed:
            os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    return killed


@pytest.mark.slow  # 1 + 2 x KILLS scans in subprocesses
def test_kill_9_at_random_points_then_resume_matches_an_uninterrupted_run(tmp_path) -> None:
    config = tmp_path / "probeguard.yaml"
    config.write_text(CONFIG)
    full = run_subprocess(_scan_args(config, tmp_path / "full"))
    assert full.returncode == 0, full.stderr
    expected = json.loads((tmp_path / "full" / "run.json").read_text())
    cases = expected["stats"]["cases"]
    assert expected["summary"]["attribution"]["attributed"] > 0
    rng = np.random.default_rng(17)
    interrupted = 0
    for trial in range(KILLS):
        out = tmp_path / f"killed-{trial}"
        at = int(rng.integers(2, cases))  # the header line, then at least one record
        interrupted += _kill_after(_scan_args(config, out), out / "run.jsonl", at)
        resumed = run_subprocess(_scan_args(config, out, "--resume"))
        assert resumed.returncode == 0, resumed.stderr
        run = json.loads((out / "run.json").read_text())
        assert run["stats"]["cases"] == cases
        assert without_statistics(run) == without_statistics(expected), f"kill at line {at}"
    assert interrupted >= 1  # at least one kill landed mid-run

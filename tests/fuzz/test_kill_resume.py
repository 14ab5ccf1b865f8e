"""Crash and resume (issue 17): a real ``probeguard scan`` subprocess is killed with SIGKILL
after a seeded random number of its cases are logged (or, once, after all of them, while it
attributes), then resumed with ``--resume`` and the killed run's cache; its
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

from fuzz.fuzzkit import PROBEGUARD, comparable, run_subprocess, subprocess_env

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
    """A scan into ``out`` with its own fresh cache (``out``/../``out``.cache)."""
    cache = out.with_name(out.name + ".cache")
    return ["scan", "--config", str(config), "--out", str(out), "--cache-dir", str(cache), *extra]


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
    full_json = tmp_path / "full" / "run.json"
    expected = json.loads(full_json.read_text())
    cases = expected["stats"]["cases"]
    assert expected["summary"]["attribution"]["attributed"] > 0
    rng = np.random.default_rng(17)
    # after the header and at least one record; the last point, every record logged, kills
    # it while it scores and attributes (whose re-runs the killed run left in the cache)
    points = [int(p) for p in rng.integers(2, cases + 1, size=KILLS - 1)] + [cases + 1]
    interrupted = 0
    for trial, at in enumerate(points):
        out = tmp_path / f"killed-{trial}"
        interrupted += _kill_after(_scan_args(config, out), out / "run.jsonl", at)
        resumed = run_subprocess(_scan_args(config, out, "--resume"))
        assert resumed.returncode == 0, resumed.stderr
        assert json.loads((out / "run.json").read_text())["stats"]["cases"] == cases
        assert comparable(out / "run.json") == comparable(full_json), f"kill at line {at}"
    assert interrupted >= 1  # at least one kill landed mid-run

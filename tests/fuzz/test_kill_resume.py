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


def _count(path: Path) -> int:
    """Lines of a file, or files in a folder (0 when absent)."""
    try:
        if path.is_dir():
            return sum(1 for p in path.rglob("*") if p.is_file())
        return path.read_bytes().count(b"\n")
    except OSError:
        return 0


def _scan_args(config: Path, out: Path, *extra: str) -> list[str]:
    """A scan into ``out`` with its own fresh cache (``out.cache`` beside it)."""
    return [
        "scan",
        "--config",
        str(config),
        "--out",
        str(out),
        "--cache-dir",
        str(_cache(out)),
        *extra,
    ]


def _cache(out: Path) -> Path:
    return out.with_name(out.name + ".cache")


def _kill_when(args: list[str], watched: Path, count: int) -> bool:
    """Start ``probeguard ARGS``, SIGKILL it once ``watched`` (a file's lines, a folder's
    entries) reaches ``count``; whether it was killed before it finished."""
    proc = subprocess.Popen(
        [*PROBEGUARD, *args],
        env=subprocess_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while proc.poll() is None and _count(watched) < count:
            time.sleep(0.005)
        killed = proc.poll() is None
        if killed:
            os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    return killed


@pytest.mark.slow  # 1 + 2 x KILLS scans in subprocesses (about a minute)
def test_kill_9_at_random_points_then_resume_matches_an_uninterrupted_run(tmp_path) -> None:
    config = tmp_path / "probeguard.yaml"
    config.write_text(CONFIG)
    full = run_subprocess(_scan_args(config, tmp_path / "full"))
    assert full.returncode == 0, full.stderr
    full_json = tmp_path / "full" / "run.json"
    expected = json.loads(full_json.read_text())
    cases = expected["stats"]["cases"]
    assert expected["summary"]["attribution"]["attributed"] > 0
    attribution_calls = expected["stats"]["attribution_calls"]
    cached_cases = _count(_cache(tmp_path / "full")) - attribution_calls
    rng = np.random.default_rng(17)
    # after the header and at least one record; then once while the run attributes: its
    # re-runs already in the cache make the resumed run's attribution calls fewer
    points = [("run.jsonl", int(p)) for p in rng.integers(2, cases + 1, size=KILLS - 1)]
    points.append(("cache", cached_cases + int(rng.integers(1, 20))))
    interrupted = 0
    for trial, (watched, at) in enumerate(points):
        out = tmp_path / f"killed-{trial}"
        target = out / "run.jsonl" if watched == "run.jsonl" else _cache(out)
        interrupted += _kill_when(_scan_args(config, out), target, at)
        resumed = run_subprocess(_scan_args(config, out, "--resume"))
        assert resumed.returncode == 0, resumed.stderr
        assert json.loads((out / "run.json").read_text())["stats"]["cases"] == cases
        assert comparable(out / "run.json") == comparable(full_json), f"killed at {at} in {watched}"
    assert interrupted >= 1  # at least one kill landed mid-run

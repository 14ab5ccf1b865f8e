"""The CI recipe: the composite action's script (``examples/ci/gate.sh``) run as the action
runs it, and (slow tier) the whole flow against the example HTTP service."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import xmlschema
import yaml

from probeguard.reports.junit import junit_schema_path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "ci" / "gate.sh"

RECOVERING = '''
import pathlib

_MARK = pathlib.Path(__file__).with_name("came_up")
DOWN = not _MARK.exists()
_MARK.touch()


def answer(question):
    """Down in the first process that imports it (every case errors), up after."""
    if DOWN:
        raise RuntimeError("connection reset")
    return "I don't know."
'''


def _env(tmp: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROBEGUARD_", "PG_"))}
    env.update(
        PYTHONPATH=os.pathsep.join([str(tmp), *sys.path]),
        PROBEGUARD=f"{sys.executable} -m probeguard.cli.main",
        GITHUB_OUTPUT=str(tmp / "github_output"),
        GITHUB_STEP_SUMMARY=str(tmp / "step_summary.md"),
        **settings,
    )
    return env


def _gate(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT)], env=env, cwd=ROOT, capture_output=True, text=True, timeout=900
    )


def test_the_action_runs_the_script_with_the_settings_it_reads() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "gate")
    assert "examples/ci/gate.sh" in step["run"]
    script = SCRIPT.read_text(encoding="utf-8")
    for name in step["env"]:
        assert name in script, f"{name} is set by the action but not read by gate.sh"
    uses = [s.get("uses", "") for s in action["runs"]["steps"]]
    assert any(u.startswith("actions/upload-artifact") for u in uses)
    assert action["outputs"]["exit-code"]["value"] == "${{ steps.gate.outputs.exit-code }}"


def test_the_script_resumes_an_incomplete_run_then_gates(tmp_path: Path) -> None:
    """The first scan errors on every case (exit 3): the script resumes it, the service is up
    by then, and the comparison with the baseline passes; a gate limit that fails (a
    semantic failure) is not retried."""
    (tmp_path / "recovering_rag.py").write_text(RECOVERING, encoding="utf-8")
    config = tmp_path / "scan.yaml"
    config.write_text(
        "demo: true\npipeline:\n  type: callable\n  callable: {target: 'recovering_rag:answer'}\n"
        "probes:\n  enabled: [unanswerable]\n",
        encoding="utf-8",
    )
    first = _gate(_env(tmp_path, PG_CONFIG=str(config), PG_OUT=str(tmp_path / "a")))
    assert first.returncode == 0, first.stdout + first.stderr
    assert "resuming the errored cases (retry 1 of 2)" in first.stderr
    run = json.loads((tmp_path / "a" / "candidate" / "run.json").read_text("utf-8"))
    assert run["stats"]["errors"] == 0 and run["stats"]["cases"] > 0

    gate = tmp_path / "gate.yaml"
    gate.write_text("limits:\n  - {slice: 'golden:pass', max_rate: 0.1}\n", encoding="utf-8")
    env = _env(
        tmp_path,
        PG_CONFIG=str(config),
        PG_OUT=str(tmp_path / "b"),
        PG_BASELINE=str(tmp_path / "a" / "candidate"),
        PG_GATE=str(gate),
    )
    second = _gate(env)
    assert second.returncode == 1, second.stdout + second.stderr
    assert "resuming" not in second.stderr  # a failing answer is never re-asked
    assert "FAILED max_rate:golden:pass" in second.stderr
    assert (tmp_path / "github_output").read_text().splitlines() == ["exit-code=0", "exit-code=1"]
    assert "release gate: FAIL" in (tmp_path / "step_summary.md").read_text("utf-8")
    xmlschema.XMLSchema(junit_schema_path()).validate(str(tmp_path / "b" / "gate" / "junit.xml"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Service:
    """``examples/ci/service.py`` in a subprocess, waited for until it accepts connections."""

    def __init__(self, port: int, *flags: str) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "examples/ci/service.py"), "--port", str(port), *flags],
            env=env,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("the example service did not start")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


@pytest.mark.slow
def test_the_ci_example_end_to_end_against_the_http_service(tmp_path: Path) -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}/ask"
    config = str(ROOT / "examples/ci/probeguard.yaml")
    service = Service(port, "--sanitise")
    try:
        base = _gate(
            _env(
                tmp_path,
                PG_CONFIG=config,
                PG_OUT=str(tmp_path / "approved"),
                PROBEGUARD_PIPELINE__HTTP__URL=url,
            )
        )
    finally:
        service.stop()
    assert base.returncode == 0, base.stdout + base.stderr

    candidate = {
        "PG_CONFIG": config,
        "PG_OUT": str(tmp_path / "candidate"),
        "PG_BASELINE": str(tmp_path / "approved" / "candidate"),
        "PG_GATE": str(ROOT / "examples/ci/gate.yaml"),
        "PROBEGUARD_PIPELINE__HTTP__URL": url,
    }
    service = Service(port, "--fail-every", "7")
    try:
        live = _gate(_env(tmp_path, **candidate))
    finally:
        service.stop()
    assert live.returncode == 1, live.stdout + live.stderr
    assert "FAILED regression:probe:prompt_hijack" in live.stderr
    run = json.loads((tmp_path / "candidate/candidate/run.json").read_text("utf-8"))
    assert run["stats"]["retries"] > 0 and run["stats"]["errors"] == 0  # 503s retried

    offline = _gate(_env(tmp_path, **candidate))  # the service is down: recorded responses
    assert offline.returncode == 1, offline.stdout + offline.stderr
    run = json.loads((tmp_path / "candidate/candidate/run.json").read_text("utf-8"))
    assert run["stats"]["calls"] == 0
    data = json.loads((tmp_path / "candidate/gate/compare.json").read_text("utf-8"))
    failed = {c["id"] for c in data["gate"]["checks"] if not c["passed"]}
    assert {"regression:probe:prompt_hijack", "max_new_failures:tag:policy"} <= failed

"""ProbeGuard's pytest plugin (entry point ``pytest11``): gate a RAG pipeline in a test suite.

- The ``probeguard_gate`` fixture runs or loads a scan and asserts a gate::

      def test_release(probeguard_gate):
          run = probeguard_gate.scan("probeguard.yaml", "runs/candidate")   # or .load(dir)
          probeguard_gate.assert_passes(run, baseline="runs/approved", gate="gate.yaml")

  ``assert_passes`` fails the test with each failed check and its failing cases.
- ``--probeguard-candidate RUN`` (with ``--probeguard-baseline RUN`` and
  ``--probeguard-gate FILE``, all optional but the first) adds one test item per gated check
  (``probeguard::regression:probe:prompt_hijack``), each passing or failing on its own, so a
  CI's test report lists them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from probeguard.config.gate import GatePolicy
from probeguard.config.loading import load_config, load_gate_policy
from probeguard.core.errors import ProbeGuardError
from probeguard.engine.compare import compare_runs
from probeguard.engine.gate import gate_run
from probeguard.engine.scan import scan
from probeguard.results.compare import GateCheck, GateOutcome
from probeguard.results.run import RunLog, load_run_log

__all__ = ["GateFixture", "GateItem", "failure_text"]

PathLike = str | Path


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("probeguard", "ProbeGuard release gate")
    group.addoption(
        "--probeguard-candidate",
        metavar="RUN",
        help="A run directory whose gate checks become test items.",
    )
    group.addoption("--probeguard-baseline", metavar="RUN", help="An approved run to compare with.")
    group.addoption("--probeguard-gate", metavar="FILE", help="A YAML gate policy.")


def failure_text(checks: list[GateCheck], limit: int = 50) -> str:
    """Each failed check's message and its failing units (up to ``limit`` each)."""
    lines = []
    for check in checks:
        if check.passed:
            continue
        lines.append(f"{check.id}: {check.message}")
        lines += [f"    {unit}" for unit in check.units[:limit]]
        if len(check.units) > limit:
            lines.append(f"    ... and {len(check.units) - limit} more")
    return "\n".join(lines)


def _policy(gate: GatePolicy | PathLike | None) -> GatePolicy:
    if gate is None:
        return GatePolicy()
    return gate if isinstance(gate, GatePolicy) else load_gate_policy(gate)


def evaluate(
    candidate: RunLog | PathLike,
    baseline: RunLog | PathLike | None = None,
    gate: GatePolicy | PathLike | None = None,
) -> GateOutcome:
    """The gate's outcome for ``candidate`` (alone, or paired with ``baseline``)."""
    policy = _policy(gate)
    cand = candidate if isinstance(candidate, RunLog) else load_run_log(candidate)
    if baseline is None:
        return gate_run(cand, policy)
    base = baseline if isinstance(baseline, RunLog) else load_run_log(baseline)
    return compare_runs(base, cand, policy=policy).gate


@dataclass
class GateFixture:
    """What the ``probeguard_gate`` fixture gives a test."""

    def load(self, run_dir: PathLike) -> RunLog:
        """A finished run (its directory or ``run.json``)."""
        return load_run_log(run_dir)

    def scan(self, config: PathLike | dict[str, Any], out_dir: PathLike) -> RunLog:
        """Run a scan from a config file (or a mapping of config values) into ``out_dir``."""
        loaded = load_config(overrides=config) if isinstance(config, dict) else load_config(config)
        return scan(loaded, out_dir).run

    def evaluate(
        self,
        candidate: RunLog | PathLike,
        baseline: RunLog | PathLike | None = None,
        gate: GatePolicy | PathLike | None = None,
    ) -> GateOutcome:
        """The gate's outcome (``status``, ``exit_code``, ``checks``)."""
        return evaluate(candidate, baseline, gate)

    def assert_passes(
        self,
        candidate: RunLog | PathLike,
        baseline: RunLog | PathLike | None = None,
        gate: GatePolicy | PathLike | None = None,
    ) -> GateOutcome:
        """Fail the test unless the gate passes; the message lists each failed check and its
        failing cases."""
        outcome = self.evaluate(candidate, baseline, gate)
        if outcome.status != "pass":
            raise AssertionError(
                f"ProbeGuard gate {outcome.status} (exit {outcome.exit_code}):\n"
                + failure_text(outcome.checks)
            )
        return outcome


@pytest.fixture
def probeguard_gate() -> GateFixture:
    """Run or load a scan and assert a release gate (``GateFixture``)."""
    return GateFixture()


class GateCheckFailed(Exception):
    """A gated check that did not pass."""


class GateItem(pytest.Item):
    """One gated check as a test item."""

    def __init__(self, *, check: GateCheck, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.check = check

    def runtest(self) -> None:
        if not self.check.passed:
            raise GateCheckFailed(failure_text([self.check]))

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, GateCheckFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"probeguard gate check {self.name}"


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    candidate = config.getoption("--probeguard-candidate", default=None)
    if not candidate:
        return
    try:
        outcome = evaluate(
            candidate,
            config.getoption("--probeguard-baseline"),
            config.getoption("--probeguard-gate"),
        )
    except ProbeGuardError as exc:
        raise pytest.UsageError(f"probeguard: {exc}") from None
    items.extend(
        GateItem.from_parent(session, name=check.id, nodeid=f"probeguard::{check.id}", check=check)
        for check in outcome.checks
    )

"""The pytest plugin, run by pytester in a fresh pytest: the ``probeguard_gate`` fixture
passes and fails with the gate, and ``--probeguard-candidate`` makes one item per check."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from gatekit import hijack_runs

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    return hijack_runs(tmp_path, new_failures=8)


def _run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *args: str):
    # Load the plugin explicitly and only it: installed, it is also an entry point.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    return pytester.runpytest_subprocess(
        "-p", "probeguard.pytest_plugin", "-p", "no:cacheprovider", *args
    )


def test_the_entry_point_is_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["entry-points"]["pytest11"] == {
        "probeguard": "probeguard.pytest_plugin"
    }


def test_the_fixture_passes_and_fails_with_the_gate(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, runs: tuple[Path, Path]
) -> None:
    base, cand = runs
    pytester.makepyfile(
        f"""
        def test_same(probeguard_gate):
            outcome = probeguard_gate.assert_passes({str(base)!r}, baseline={str(base)!r})
            assert outcome.exit_code == 0

        def test_regressed(probeguard_gate):
            run = probeguard_gate.load({str(cand)!r})
            probeguard_gate.assert_passes(run, baseline={str(base)!r})
        """
    )
    result = _run(pytester, monkeypatch)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*ProbeGuard gate fail (exit 1)*",
            "*regression:probe:prompt_hijack: *Holm-adjusted p = *",
            "*prompt_hijack:q07*",
        ]
    )


def test_each_gated_check_becomes_a_test_item(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, runs: tuple[Path, Path]
) -> None:
    base, cand = runs
    failing = _run(
        pytester,
        monkeypatch,
        "--probeguard-candidate",
        str(cand),
        "--probeguard-baseline",
        str(base),
        "-rf",
    )
    failing.assert_outcomes(passed=5, failed=1)  # 2 error rates, 3 golden checks, hijack
    failing.stdout.fnmatch_lines(["*FAILED *probeguard::regression:probe:prompt_hijack*"])
    failing.stdout.fnmatch_lines(["*prompt_hijack:q00*"])
    passing = _run(
        pytester,
        monkeypatch,
        "--probeguard-candidate",
        str(base),
        "--probeguard-baseline",
        str(base),
    )
    passing.assert_outcomes(passed=6)
    assert passing.ret == 0


def test_bad_input_is_a_usage_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    result = _run(pytester, monkeypatch, "--probeguard-candidate", str(tmp_path / "missing"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*probeguard: *cannot read*"])

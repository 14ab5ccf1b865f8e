"""Fuzzing every input surface (issue 17): broken corpora, question and attack files, eval
datasets, YAML configs, environment overrides, CLI flags and run folders end in exit 2 with one
``error:`` line naming the file, never a traceback, and leave no output folder behind (a
mutation that happens to stay valid may also exit 0).

Hypothesis mutates a valid file of each surface (``fuzzkit.mutated``); hand-made pathological
files cover what random mutation rarely reaches. The slow tier runs 2,040 generated inputs
(170 per surface) plus the environment and flag fuzzers; the fast tier a few per surface.
Examples are derandomized, so every run tries the same inputs. A handful of the
pathological files also go through a real ``python -m probeguard.cli.main`` subprocess.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz.fuzzkit import (
    CORPUS,
    FAST_CONFIG,
    SURFACES,
    Surface,
    check_bad_input,
    check_result,
    jsonl,
    mutated,
    run_subprocess,
    workdir,
    write_input,
)

SLOW_PER_SURFACE = 170  # x 12 surfaces = 2,040 generated inputs
FAST_PER_SURFACE = 4


def _fuzz(surface: Surface, examples: int) -> None:
    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(data=mutated(surface.seed))
    def run(data: bytes) -> None:
        check_bad_input(surface, data)

    run()


@pytest.mark.parametrize("surface", SURFACES, ids=[s.name for s in SURFACES])
def test_mutated_inputs_fast(surface: Surface) -> None:
    _fuzz(surface, FAST_PER_SURFACE)


@pytest.mark.slow  # 2,040 CLI runs
@pytest.mark.parametrize("surface", SURFACES, ids=[s.name for s in SURFACES])
def test_mutated_inputs(surface: Surface) -> None:
    _fuzz(surface, SLOW_PER_SURFACE)


def _deep(n: int) -> bytes:
    return b"[" * n + b"]" * n


PATHOLOGICAL: dict[str, bytes] = {
    "empty": b"",
    "bom only": b"\xef\xbb\xbf",
    "nul bytes": b"\x00" * 64,
    "latin-1": "caf\xe9 cr\xe8me\n".encode("latin-1"),
    "utf-16": '{"id": "a"}'.encode("utf-16"),
    "deep list": _deep(200_000),
    "deep object": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    "nan token": b'{"id": "a", "text": NaN}\n',
    "huge int": b'{"id": 1' + b"0" * 5000 + b', "text": "t"}\n',
    "lone surrogate": b'{"id": "a", "text": "\\ud800"}\n',
    "unclosed quote": b'id,text,input\na,"never closed\nb,c,d\n',
    "stray quote": b'id,text,input\na,x"y"z,q\n',
    "crlf only": b"\r\n\r\n\r\n",
    "control chars": b"\x1b[31m\x07\x08\x0c\n",
    "long line": b'{"text": "' + b"x" * 2_000_000 + b'"}\n',
    "yaml alias bomb": b"a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    b"c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    b"e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    b"g: [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n",
    "yaml python tag": b"seed: !!python/object/apply:os.system ['true']\n",
    "yaml tabs": b"corpus:\n\tpath: x\n",
    "yaml list top": b"- 1\n- 2\n",
    "minified list": json.dumps([{"input": "a"}, {"input": "b"}] * 3).encode(),
    "zip not xlsx": b"PK\x03\x04garbage",
}


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
@pytest.mark.parametrize("surface", SURFACES, ids=[s.name for s in SURFACES])
def test_pathological_files(surface: Surface, name: str) -> None:
    check_bad_input(surface, PATHOLOGICAL[name])


def test_xlsx_that_is_not_a_workbook() -> None:
    surface = next(s for s in SURFACES if s.name == "eval.csv")
    xlsx = Surface("eval.xlsx", "", "d.xlsx", surface.args)
    result = check_bad_input(xlsx, b"PK\x03\x04 not a workbook")
    assert result.exit_code == 2 and "d.xlsx" in result.output


def test_a_folder_where_a_file_belongs() -> None:
    for surface in SURFACES:
        with workdir() as work:
            path = work / surface.filename
            path.mkdir(parents=True)
            check_bad_input_at(surface, work, path)


def check_bad_input_at(surface: Surface, work, path) -> None:  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from probeguard.cli.main import cli

    out = work / "out"
    args = surface.args(path, work, out)
    result = CliRunner().invoke(cli, args)
    assert not (result.exception and not isinstance(result.exception, SystemExit)), result
    check_result(result.exit_code, result.output, out, "--resume" in args)


# -- environment overrides and CLI flags -------------------------------------------------------
ENV_KEYS = [
    "PROBEGUARD_SEED",
    "PROBEGUARD_RUNNER__CONCURRENCY",
    "PROBEGUARD_RUNNER__TIMEOUT_S",
    "PROBEGUARD_PIPELINE__REFERENCE__TOP_K",
    "PROBEGUARD_PIPELINE__REFERENCE__RETRIEVER",
    "PROBEGUARD_PIPELINE__REFERENCE__GENERATOR__MAX_SENTENCES",
    "PROBEGUARD_PIPELINE__TYPE",
    "PROBEGUARD_PROBES__OVERLAP_WEIGHTS",
    "PROBEGUARD_CORPUS__FORMAT",
    "PROBEGUARD_NOSUCH__KEY",
    "PROBEGUARD_",
]
ENV_VALUES = st.one_of(
    st.sampled_from(["abc", "-1", "0", "1e999", "nan", "[", "{a: 1}", "~", "true", "[1, 2]"]),
    st.text(max_size=20).filter(lambda t: "\x00" not in t),
)


def _env_surface() -> Surface:
    def args(path, work, out):  # type: ignore[no-untyped-def]
        (work / "c.jsonl").write_text(jsonl(CORPUS))
        return ["scan", "--config", str(path), "--out", str(out), "--no-cache", "--no-progress"]

    return Surface("env", "", "p.yaml", args)


def _config_text() -> bytes:
    return ("corpus: {path: c.jsonl}\nprobes: {enabled: []}\n" + FAST_CONFIG).encode()


@pytest.mark.parametrize("examples", [pytest.param(60, marks=pytest.mark.slow), 3])
def test_environment_overrides(examples: int) -> None:
    surface = _env_surface()

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.dictionaries(st.sampled_from(ENV_KEYS), ENV_VALUES, min_size=1, max_size=3))
    def run(env: dict[str, str]) -> None:
        check_bad_input(surface, _config_text(), env=env)

    run()


FLAGS = st.lists(
    st.sampled_from(
        [
            "--seed",
            "--concurrency",
            "--cache-dir",
            "--out",
            "--threshold",
            "--config",
            "--demo",
            "--resume",
            "--bogus",
            "-v",
            "x",
            "",
            "-1",
            "abc",
            "1e9",
            "--",
            "=",
            "faithfulness=2",
        ]
    ),
    max_size=5,
)


@pytest.mark.parametrize("examples", [pytest.param(150, marks=pytest.mark.slow), 5])
def test_cli_flags(examples: int) -> None:
    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.sampled_from(["scan", "eval", "fix", "sweep", "schema", "list"]), FLAGS)
    def run(command: str, flags: list[str]) -> None:
        if "--demo" in flags and command in ("scan", "sweep", "eval"):
            flags = [f for f in flags if f != "--demo"]  # a valid demo scan takes minutes
        with workdir() as work:
            (work / "p.yaml").write_bytes(_config_text())
            (work / "c.jsonl").write_text(jsonl(CORPUS))
            flags = [str(work / "p.yaml") if f == "x" else f for f in flags]
            check_bad_input(Surface("flags", "", "unused", lambda p, w, o: [command, *flags]), b"")

    run()


# -- a handful through a real subprocess ---------------------------------------------------------
@pytest.mark.slow  # five interpreter starts
@pytest.mark.parametrize(
    ("surface_name", "name"),
    [
        ("corpus.jsonl", "deep list"),
        ("config.yaml", "latin-1"),
        ("config.yaml", "yaml alias bomb"),
        ("eval.csv", "unclosed quote"),
        ("run.json (fix)", "nan token"),
    ],
)
def test_real_subprocess(surface_name: str, name: str) -> None:
    surface = next(s for s in SURFACES if s.name == surface_name)
    with workdir() as work:
        path = write_input(work, surface, PATHOLOGICAL[name])
        out = work / "out"
        proc = run_subprocess(surface.args(path, work, out))
        assert proc.returncode == 2, proc.stderr
        assert proc.stdout == "" and proc.stderr.count("\n") == 1, proc.stderr
        assert proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr
        assert not out.exists()

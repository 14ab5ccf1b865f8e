"""What the fuzz tests share: the input surfaces as CLI invocations, the bad-input check, and
hypothesis strategies that mutate valid files into broken ones.

A surface writes one input file (or folder) into a fresh directory and returns the CLI
arguments that read it. ``check_bad_input`` runs them in-process (click's ``CliRunner``) and
asserts the contract of issue 17: exit 0 (the input happened to be valid) or exit 2 with one
line on the output naming a file, never a traceback, and no output folder left behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner, Result
from hypothesis import strategies as st

import probeguard
from probeguard.cli.main import cli

CORPUS = [
    {"id": "a", "title": "Tower", "text": "The Eiffel Tower is in Paris. It opened in 1889."},
    {"id": "b", "text": "Mount Everest is 8849 metres tall.", "metadata": {"k": "v"}},
]
QUESTIONS = [
    {
        "id": "q1",
        "question": "Where is the tower?",
        "answers": ["Paris"],
        "evidence_doc_ids": ["a"],
    },
    {"id": "q2", "question": "How tall is Everest?", "mode": "answer", "tags": ["x"]},
]
ATTACKS = [{**QUESTIONS[0], "type": "lexical_mismatch"}]
EVAL = [
    {
        "id": "r1",
        "input": "Where?",
        "answer": "Paris",
        "groundTruth": "Paris",
        "retrievalContext": ["Paris is here."],
        "retrievalRelevance": [True],
        "tags": ["t"],
    },
]
FAST_CONFIG = (
    "pipeline:\n  reference:\n    embedder: {name: hashing, dim: 64}\n"
    "    retriever: {name: bm25}\n"
    "metrics: {standard: false}\nattribution: {enabled: false}\n"
)
"""A scan that runs in about a second when the input happens to be valid."""


def jsonl(rows: list[dict[str, object]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def csv_text(rows: list[dict[str, object]]) -> str:
    header = sorted({k for r in rows for k in r})
    lines = [",".join(header)]
    for r in rows:
        lines.append(
            ",".join(
                json.dumps(r.get(k, ""))
                if isinstance(r.get(k), list)
                else '"' + str(r.get(k, "")).replace('"', '""') + '"'
                for k in header
            )
        )
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Surface:
    """One input surface: the valid file it starts from, its name, and the CLI call."""

    name: str
    seed: str
    filename: str
    args: Callable[[Path, Path, Path], list[str]]
    """(the written input, the work folder, the output folder) → CLI arguments."""


def _scan_with(key: str, extra: str = "") -> Callable[[Path, Path, Path], list[str]]:
    def args(path: Path, work: Path, out: Path) -> list[str]:
        corpus = work / "corpus.jsonl"
        if key != "path":
            corpus.write_text(jsonl(CORPUS))
        paths = {"path": corpus, **({key: path} if key != "path" else {"path": path})}
        body = "corpus:\n" + "".join(f"  {k}: {json.dumps(str(v))}\n" for k, v in paths.items())
        config = work / "probeguard.yaml"
        config.write_text(body + FAST_CONFIG + extra)
        return ["scan", "--config", str(config), "--out", str(out), "--no-cache", "--no-progress"]

    return args


def _scan_config(path: Path, work: Path, out: Path) -> list[str]:
    (work / "c.jsonl").write_text(jsonl(CORPUS))
    return ["scan", "--config", str(path), "--out", str(out), "--no-cache", "--no-progress"]


def _eval(path: Path, work: Path, out: Path) -> list[str]:
    return ["eval", str(path), "--out", str(out), "--no-cache", "--no-progress"]


def _fix(path: Path, work: Path, out: Path) -> list[str]:
    return ["fix", str(path.parent), "--out", str(out), "--no-cache", "--no-progress"]


def _resume(path: Path, work: Path, out: Path) -> list[str]:
    config = work / "probeguard.yaml"
    (work / "corpus.jsonl").write_text(jsonl(CORPUS))
    config.write_text(f"corpus: {{path: {json.dumps(str(work / 'corpus.jsonl'))}}}\n" + FAST_CONFIG)
    return [
        "scan",
        "--config",
        str(config),
        "--out",
        str(path.parent),
        "--resume",
        "--no-cache",
        "--no-progress",
    ]


NO_PROBES = "probes: {enabled: []}\n"
SURFACES = [
    Surface("corpus.jsonl", jsonl(CORPUS), "c.jsonl", _scan_with("path", NO_PROBES)),
    Surface(
        "corpus.json",
        json.dumps({"documents": CORPUS}, indent=1),
        "c.json",
        _scan_with("path", NO_PROBES),
    ),
    Surface("corpus.csv", csv_text(CORPUS[:1]), "c.csv", _scan_with("path", NO_PROBES)),
    Surface("questions.jsonl", jsonl(QUESTIONS), "q.jsonl", _scan_with("questions", NO_PROBES)),
    Surface("questions.json", json.dumps(QUESTIONS), "q.json", _scan_with("questions", NO_PROBES)),
    Surface(
        "attacks.jsonl",
        jsonl(ATTACKS),
        "a.jsonl",
        _scan_with("attacks", "probes: {enabled: [attack_types]}\n"),
    ),
    Surface("eval.jsonl", jsonl(EVAL), "d.jsonl", _eval),
    Surface("eval.json", json.dumps(EVAL), "d.json", _eval),
    Surface("eval.csv", csv_text(EVAL), "d.csv", _eval),
    Surface(
        "config.yaml", "corpus: {path: c.jsonl}\n" + FAST_CONFIG + NO_PROBES, "p.yaml", _scan_config
    ),
    Surface("run.json (fix)", json.dumps({"kind": "run", "version": 1}), "run/run.json", _fix),
    Surface("run.jsonl (resume)", '{"kind": "header", "version": 1}\n', "run/run.jsonl", _resume),
]


@contextmanager
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="pg-fuzz-") as name:
        yield Path(name)


def write_input(work: Path, surface: Surface, data: bytes) -> Path:
    path = work / surface.filename
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def check_result(exit_code: int, output: str, out: Path, existed: bool) -> None:
    """The contract: exit 0, or exit 2 with one ``error: ...`` line and no new output (or
    ``eval``'s documented exit 1 when a valid dataset falls below a threshold, or ``scan``'s
    exit 3 when a valid input makes no case to run: an incomplete run, issue 13)."""
    assert "Traceback" not in output, output
    below = exit_code == 1 and "\nFAILED: below threshold" in output
    nothing_run = exit_code == 3 and "0 cases:" in output  # a scan with no case is incomplete
    assert exit_code in (0, 2) or below or nothing_run, f"exit {exit_code}: {output[-2000:]}"
    if exit_code == 2:
        lines = [line for line in output.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), output
        if not existed:
            assert not out.exists(), f"a failed run left {out}: {output}"


def check_bad_input(surface: Surface, data: bytes, env: dict[str, str] | None = None) -> Result:
    """Write ``data`` as the surface's input, run the CLI in-process, check the contract."""
    with workdir() as work:
        path = write_input(work, surface, data)
        out = work / "out"
        args = surface.args(path, work, out)
        existed = "--resume" in args
        if existed:
            out = path.parent
        result = CliRunner().invoke(cli, args, env=env, catch_exceptions=True)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise AssertionError(f"{surface.name}: uncaught {result.exception!r}") from (
                result.exception
            )
        check_result(result.exit_code, result.output, out, existed)
        return result


def subprocess_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """This environment, with the source of the ``probeguard`` under test first on the path."""
    src = str(Path(probeguard.__file__).resolve().parents[1])
    path = os.pathsep.join([src, *filter(None, [os.environ.get("PYTHONPATH")])])
    return {**os.environ, "PYTHONPATH": path, **(env or {})}


PROBEGUARD = [sys.executable, "-m", "probeguard.cli.main"]
"""``probeguard`` in a real interpreter (this one)."""


def run_subprocess(
    args: list[str], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``probeguard ARGS`` in a subprocess; its output captured as text."""
    return subprocess.run(
        [*PROBEGUARD, *args],
        capture_output=True,
        text=True,
        env=subprocess_env(env),
        timeout=600,
        check=False,
    )


# -- strategies --------------------------------------------------------------------------------
JSON_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
NASTY = [
    b"",
    b"\x00",
    b"\xff\xfe",
    b"\xef\xbb\xbf",
    b"\r",
    b"\r\n",
    b'"',
    b",",
    b"[",
    b"{",
    b"}",
    b"]",
    b"NaN",
    b"Infinity",
    b"1e999",
    b"-",
    b":",
    b"*",
    b"&a",
    b"!!python/object:os.system",
    b"\xc3\x28",
    b"\xe2\x80\xae",
    b"\t",
    b"---\n",
    b"%YAML 1.2\n",
    b"'",
    b"\\",
    "\u0085".encode(),
]


@st.composite
def mutated(draw: st.DrawFn, seed: str) -> bytes:
    """``seed`` (a valid file) broken in one to three ways: cut, spliced with nasty bytes or
    random text, a line replaced by random JSON, a value deeply nested, bytes flipped."""
    data = bytearray(seed.encode("utf-8"))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["cut", "nasty", "text", "json", "nest", "flip", "dup"]))
        at = draw(st.integers(0, len(data)))
        if kind == "cut":
            data = data[:at]
        elif kind == "nasty":
            data[at:at] = draw(st.sampled_from(NASTY))
        elif kind == "text":
            data[at:at] = draw(st.text(max_size=12)).encode("utf-8")
        elif kind == "json":
            lines = bytes(data).split(b"\n")
            i = draw(st.integers(0, max(0, len(lines) - 1)))
            lines[i] = json.dumps(draw(JSON_VALUES)).encode("utf-8")
            data = bytearray(b"\n".join(lines))
        elif kind == "nest":
            depth = draw(st.sampled_from([50, 5000, 200_000]))
            data[at:at] = b"[" * depth + b"]" * depth
        elif kind == "flip" and data:
            i = draw(st.integers(0, len(data) - 1))
            data[i] = draw(st.integers(0, 255))
        elif kind == "dup":
            data = data + data
    return bytes(data)


# -- comparing runs ------------------------------------------------------------------------------
RUN_STATISTICS = frozenset({"duration_s", "latency_s", "cached", "attempts"})
"""Per-record fields that describe how a call went (time, cache, retries), not its result."""


def without_statistics(run: dict[str, object]) -> dict[str, object]:
    """``run.json`` less what may differ between identical runs: ``stats`` (calls, cache hits,
    resumed cases, time) and each record's ``RUN_STATISTICS``."""

    def strip(value: object) -> object:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in RUN_STATISTICS}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    out = {k: v for k, v in run.items() if k != "stats"}
    out["records"] = strip(out.get("records", []))
    return out


def comparable(path: Path) -> dict[str, object]:
    """The ``run.json`` at ``path`` less run statistics and the cache folder it used."""
    run = json.loads(path.read_text())
    run["config"]["runner"].pop("cache_dir")
    return without_statistics(run)

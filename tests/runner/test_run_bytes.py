"""Every ``run.jsonl`` byte, cache entry, call key and returned record of a run, against a
golden file written by the runner before the issue-18 CPU work (main at 24f037b): cases with
variations, awkward floats (rounded, NaN, ±inf, numpy), tuples and sets in free-form fields,
errors, retries, in-flight duplicates, an unsupported variation, then a second run served from
the cache and a resumed run. The clock is a counter (one call, one step) so that durations
and latencies are the same bytes every time; the pipeline awaits nothing that takes time, so
the order of events is the same too.

Regenerate (only when a change of bytes is intended, and say so in the commit)::

    PROBEGUARD_WRITE_GOLDEN=1 python -m pytest tests/runner/test_run_bytes.py
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from probeguard.core.cases import Case, Expected
from probeguard.core.documents import Document
from probeguard.core.errors import PipelineCallError
from probeguard.core.pipeline import Capability, PipelineOutput, RetrievedChunk, Usage, Variation
from probeguard.core.records import RunHeader
from probeguard.log.writer import RunLogWriter, dump_json_line, read_run_jsonl
from probeguard.runner import ResponseCache, RetryPolicy, Runner, RunnerConfig
from probeguard.runner import executor as executor_module

GOLDEN = Path(__file__).parent / "golden" / "run_bytes.json"


class Clock:
    """``time.perf_counter`` stand-in: each call is 0.1234567891234 s after the last."""

    def __init__(self) -> None:
        self.now = 1000.0

    def perf_counter(self) -> float:
        self.now += 0.1234567891234
        return self.now


class Scripted:
    """A native pipeline whose answers and failures are fixed by the question."""

    name = "scripted"
    capabilities = frozenset(Capability) - {Capability.PROMPT_OVERRIDE}

    def __init__(self) -> None:
        self.attempts: dict[str, int] = {}

    def fingerprint(self) -> str:
        return "scripted-v1"

    async def aanswer(self, question: str, variation: Variation | None = None) -> PipelineOutput:
        await asyncio.sleep(0)
        n = self.attempts[question] = self.attempts.get(question, 0) + 1
        if question.startswith("flaky") and n < 3:
            raise PipelineCallError(f"HTTP 503 try {n}", transient=True, status=503)
        if question.startswith("down"):
            raise ConnectionError("connection reset\n  by peer")
        if question.startswith("bad"):
            raise ValueError("x" * 600)
        return _output(question, variation)


def _output(question: str, variation: Variation | None) -> PipelineOutput:
    odd = len(question) % 2 == 1
    return PipelineOutput(
        answer=f"A: {question} é ✓",
        cited_chunk_ids=["c1"],
        retrieved=[
            RetrievedChunk(
                chunk_id="c1",
                doc_id="d1",
                text="ctx one",
                rank=1,
                score=1 / 3,
                metadata={"pair": (1, 2.5), "big": 2**70},
            ),
            RetrievedChunk(chunk_id="c2", doc_id="d2", text="two", rank=2, score=None),
        ],
        refused=question.endswith("?"),
        latency_s=None if odd else 2 / 3,
        usage=Usage(prompt_tokens=12, completion_tokens=None),
        metadata={
            "nan": math.nan,
            "inf": -math.inf,
            "array": np.array([0.1, 0.7]),
            "scalar": np.float32(0.3),
            "int64": np.int64(7),
            "set": {"only"},  # (a larger set is written in hash order: not repeatable)
            "tuple": (0.1 + 0.2, "s"),
            "nested": {"x": [1.0000000000001, True, None, 1.0, 0, -0.0]},
            "variation": None if variation is None else variation.model_dump(mode="json"),
        },
    )


def _cases() -> list[Case]:
    poison = Document(id="p1", text="ignore previous", metadata={"w": 0.1 + 0.2})
    return [
        Case(id="plain", question="what is a?"),
        Case(
            id="rich",
            question="what is b",
            probe="paraphrase",
            tags=("t1", "t2"),
            expected=Expected(answers=("b",), evidence_doc_ids=("d1",), must_cite=("d1",)),
            meta={"score": 2 / 3, "pair": (1, 2), "nested": {"f": [0.1 + 0.2]}},
        ),
        Case(id="dup", question="what is a?", tags=("dup",)),
        Case(id="excl", question="what is c", variation=Variation(exclude_doc_ids=("z", "a"))),
        Case(
            id="over",
            question="what is d",
            variation=Variation(overlay=(poison,), retrieval={"top_k": 3, "w": 0.1 + 0.2}),
        ),
        Case(id="ctx", question="what is e", variation=Variation(contexts=("x é", "y"))),
        Case(id="sample", question="what is a?", variation=Variation(sample=2)),
        Case(id="flaky", question="flaky one"),
        Case(id="down", question="down one"),
        Case(id="bad", question="bad one"),
        Case(id="prompt", question="what is f", variation=Variation(prompt="strict")),
    ]


def _header() -> RunHeader:
    return RunHeader(
        probeguard_version="golden", pipeline_name="scripted", pipeline_fingerprint="scripted-v1"
    )


def _runner(pipeline: Any, tmp: Path, **kwargs: Any) -> Runner:
    config = RunnerConfig(concurrency=1, retry=RetryPolicy(retries=3, base_s=0.0, max_s=0.0))
    return Runner(pipeline, config, cache=ResponseCache(tmp / "cache"), **kwargs)


def _produce(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The bytes of three runs: fresh, from the cache, resumed with one case changed."""
    clock = types.SimpleNamespace(perf_counter=Clock().perf_counter)
    monkeypatch.setattr(executor_module, "time", clock)
    cases = _cases()
    out: dict[str, Any] = {"keys": [c.call_key("scripted-v1") for c in cases]}
    with RunLogWriter(tmp / "first.jsonl", _header()) as log:
        first = _runner(Scripted(), tmp, log=log).run(cases)
    with RunLogWriter(tmp / "second.jsonl", _header()) as log:
        second = _runner(Scripted(), tmp, log=log).run(cases)
    changed = [
        c.model_copy(update={"question": "what is g"}) if c.id == "ctx" else c for c in cases
    ]
    with RunLogWriter(tmp / "first.jsonl", _header(), resume=True) as log:
        third = _runner(Scripted(), tmp, log=log, resume_from=log.finished()).run(changed)
    for name, result in (("first", first), ("second", second), ("resumed", third)):
        out[f"{name}_records"] = [dump_json_line(r) for r in result.records]
        out[f"{name}_stats"] = result.stats.model_dump(exclude={"wall_s"})
    _, logged = read_run_jsonl(tmp / "first.jsonl")
    out["read_back"] = [dump_json_line(r) for r in logged]
    for name in ("first", "second"):
        out[f"{name}_jsonl"] = (tmp / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    out["cache"] = {
        p.name: p.read_text(encoding="utf-8") for p in sorted((tmp / "cache").rglob("*.json"))
    }
    return out


def test_run_log_cache_and_records_are_the_golden_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    produced = _produce(tmp_path, monkeypatch)
    if os.environ.get("PROBEGUARD_WRITE_GOLDEN"):
        GOLDEN.write_text(json.dumps(produced, indent=1, ensure_ascii=False) + "\n", "utf-8")
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    for part in golden:
        assert produced[part] == golden[part], part
    assert produced.keys() == golden.keys()

"""Streaming log and resume: a crashed run loses nothing, and resuming re-calls nothing done."""

from __future__ import annotations

import _thread
import asyncio
import json
import math
import threading
import time

import pytest

from probeguard.core.cases import Case
from probeguard.core.errors import InputError
from probeguard.core.pipeline import Capability, PipelineOutput, Variation
from probeguard.core.records import CaseError, CaseRecord, RunHeader
from probeguard.log.writer import RunLogWriter, dump_json_line, read_run_jsonl
from probeguard.runner import Runner, RunnerConfig


class CrashingPipeline:
    """Async pipeline that raises ``crash`` (a BaseException) on call number ``crash_at``."""

    name = "crashy"
    capabilities: frozenset[Capability] = frozenset()

    def __init__(
        self,
        crash_at: int | None = None,
        crash: type[BaseException] = asyncio.CancelledError,
        fingerprint: str = "crashy-1",
    ) -> None:
        self.crash_at = crash_at
        self.crash = crash
        self._fingerprint = fingerprint
        self.calls: list[str] = []

    def fingerprint(self) -> str:
        return self._fingerprint

    async def aanswer(self, question: str, variation: Variation | None = None) -> PipelineOutput:
        self.calls.append(question)
        if self.crash_at is not None and len(self.calls) == self.crash_at:
            raise self.crash()
        await asyncio.sleep(0.001)
        return PipelineOutput(answer="A:" + question)


class SyncCrashingPipeline:
    """Sync pipeline whose call ``crash_at`` presses Ctrl-C: it sends the main thread a
    SIGINT (``_thread.interrupt_main``), as a user's keyboard would."""

    name = "crashy"
    capabilities: frozenset[Capability] = frozenset()

    def __init__(self, crash_at: int) -> None:
        self.crash_at = crash_at
        self.lock = threading.Lock()
        self.calls = 0

    def fingerprint(self) -> str:
        return "crashy-1"

    def answer(self, question: str, variation: Variation | None = None) -> PipelineOutput:
        with self.lock:
            self.calls += 1
            n = self.calls
        if n == self.crash_at:
            _thread.interrupt_main()
        time.sleep(0.002)
        return PipelineOutput(answer="A:" + question)


def header(fingerprint: str = "crashy-1", corpus: str | None = None) -> RunHeader:
    return RunHeader(
        probeguard_version="test",
        pipeline_name="crashy",
        pipeline_fingerprint=fingerprint,
        corpus_fingerprint=corpus,
    )


def make_cases(n: int) -> list[Case]:
    return [Case(id=f"case-{i:03d}", question=f"question {i}") for i in range(n)]


async def test_crash_then_resume_calls_only_what_is_missing(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    cases = make_cases(40)
    crashy = CrashingPipeline(crash_at=25)
    with RunLogWriter(path, header()) as log:
        with pytest.raises(asyncio.CancelledError):
            await Runner(crashy, RunnerConfig(concurrency=4), log=log).arun(cases)
    _, logged = read_run_jsonl(path)
    done_before = {r.case.id for r in logged}
    assert 15 <= len(done_before) < 25  # what finished before the crash is on disk

    again = CrashingPipeline()
    with RunLogWriter(path, header(), resume=True) as log:
        finished = log.finished()
        assert set(finished) == done_before
        result = await Runner(
            again, RunnerConfig(concurrency=4), log=log, resume_from=finished
        ).arun(cases)
    assert len(again.calls) == 40 - len(done_before)
    assert not set(again.calls) & {finished[i].case.question for i in done_before}
    assert [r.case.id for r in result.records] == [c.id for c in cases]
    assert [r.output.answer for r in result.records] == [f"A:question {i}" for i in range(40)]
    assert result.stats.resumed == len(done_before)
    assert result.stats.calls == 40 - len(done_before)
    # Resumed records were not written twice: every case is on exactly one line.
    _, logged = read_run_jsonl(path)
    assert sorted(r.case.id for r in logged) == [c.id for c in cases]


def test_keyboard_interrupt_in_a_sync_pipeline_keeps_the_log(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    cases = make_cases(30)
    with RunLogWriter(path, header()) as log:
        with pytest.raises(KeyboardInterrupt):
            Runner(SyncCrashingPipeline(crash_at=12), RunnerConfig(concurrency=2), log=log).run(
                cases
            )
    _, logged = read_run_jsonl(path)
    assert 5 <= len(logged) <= 13
    with RunLogWriter(path, header(), resume=True) as log:
        pipe = SyncCrashingPipeline(crash_at=10_000)
        result = Runner(pipe, RunnerConfig(concurrency=2), log=log, resume_from=log.finished()).run(
            cases
        )
    assert pipe.calls == 30 - len(logged)
    assert all(r.ok for r in result.records)


def test_truncated_last_line_is_dropped_and_the_file_repaired(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    cases = make_cases(6)
    with RunLogWriter(path, header()) as log:
        result = Runner(CrashingPipeline(), log=log).run(cases[:4])
    full = path.read_bytes()
    # A crash in the middle of writing the fourth record.
    cut = full.rstrip(b"\n").rfind(b"\n") + 1 + 40
    path.write_bytes(full[:cut])
    hdr, partial = read_run_jsonl(path)
    assert hdr == header() and len(partial) == 3

    pipe = CrashingPipeline()
    with RunLogWriter(path, header(), resume=True) as log:
        assert len(log.finished()) == 3
        resumed = Runner(pipe, log=log, resume_from=log.finished()).run(cases)
    assert len(pipe.calls) == 3  # the truncated case and the two new ones
    kept = {r.case.id for r in partial}
    assert [r.output for r in resumed.records if r.case.id in kept] == [
        r.output for r in result.records if r.case.id in kept
    ]
    assert [r.output.answer for r in resumed.records] == [f"A:{c.question}" for c in cases]
    # Every line of the repaired file is valid JSON, and each case appears once.
    lines = path.read_text().splitlines()
    assert all(json.loads(line) for line in lines)
    assert sorted(json.loads(line)["case"]["id"] for line in lines[1:]) == [c.id for c in cases]


def test_a_complete_last_line_without_newline_is_kept(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    with RunLogWriter(path, header()) as log:
        Runner(CrashingPipeline(), log=log).run(make_cases(2))
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    with RunLogWriter(path, header(), resume=True) as log:
        assert len(log.finished()) == 2
        log.append(
            CaseRecord(
                case=Case(id="x", question="y"), call_key="k", output=PipelineOutput(answer="z")
            )
        )
    _, records = read_run_jsonl(path)
    assert [r.case.id for r in records] == ["case-000", "case-001", "x"]


def test_resume_refuses_a_different_pipeline(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    RunLogWriter(path, header("crashy-1")).close()
    with pytest.raises(InputError) as info:
        RunLogWriter(path, header("other-fingerprint"), resume=True)
    err = info.value
    assert err.field == "pipeline_fingerprint" and err.line == 1
    assert "different pipeline" in str(err) and str(path) in str(err)
    RunLogWriter(tmp_path / "c.jsonl", header(corpus="corpus-a")).close()
    with pytest.raises(InputError, match="different corpus"):
        RunLogWriter(tmp_path / "c.jsonl", header(corpus="corpus-b"), resume=True)


def test_a_bad_line_before_the_end_is_an_input_error(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    with RunLogWriter(path, header()) as log:
        Runner(CrashingPipeline(), log=log).run(make_cases(3))
    lines = path.read_text().splitlines()
    lines[2] = lines[2][:30]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as info:
        read_run_jsonl(path)
    assert info.value.line == 3
    with pytest.raises(InputError):
        RunLogWriter(path, header(), resume=True)
    (tmp_path / "notalog.jsonl").write_text('{"kind": "case"}\n{"kind": "case"}\n')
    with pytest.raises(InputError, match="not a run header"):
        read_run_jsonl(tmp_path / "notalog.jsonl")


def test_without_resume_the_file_starts_over(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    with RunLogWriter(path, header()) as log:
        Runner(CrashingPipeline(), log=log).run(make_cases(3))
    with RunLogWriter(path, header("new-fp")) as log:
        assert log.finished() == {}
    hdr, records = read_run_jsonl(path)
    assert hdr.pipeline_fingerprint == "new-fp" and records == []


def test_failed_and_changed_cases_are_run_again(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    cases = make_cases(4)
    with RunLogWriter(path, header()) as log:
        first = Runner(CrashingPipeline(), log=log).run(cases)
        failed = first.records[1].model_copy(
            update={"output": None, "error": CaseError(type="X", message="m")}
        )
        log.append(failed)
    changed = list(cases)
    changed[2] = Case(id=cases[2].id, question="a new question")  # same id, new call
    changed[3] = cases[3].model_copy(update={"tags": ("new-tag",)})  # same call, new tags
    pipe = CrashingPipeline()
    with RunLogWriter(path, header(), resume=True) as log:
        result = Runner(pipe, log=log, resume_from=log.finished()).run(changed)
    assert sorted(pipe.calls) == ["a new question", "question 1"]
    assert result.stats.resumed == 2
    assert result.records[3].case.tags == ("new-tag",)
    assert result.records[2].output.answer == "A:a new question"
    # Later lines supersede earlier ones.
    with RunLogWriter(path, header(), resume=True) as log:
        latest = log.finished()
    assert {k: v.output.answer for k, v in latest.items()} == {
        r.case.id: r.output.answer for r in result.records
    }
    assert latest[cases[3].id].case.tags == ("new-tag",)


def test_records_resumed_from_another_file_are_written_to_the_new_log(tmp_path) -> None:
    cases = make_cases(3)
    with RunLogWriter(tmp_path / "old.jsonl", header()) as log:
        Runner(CrashingPipeline(), log=log).run(cases[:2])
    with RunLogWriter(tmp_path / "old.jsonl", header(), resume=True) as old:
        previous = old.finished()
    pipe = CrashingPipeline()
    with RunLogWriter(tmp_path / "new.jsonl", header()) as log:
        result = Runner(pipe, log=log, resume_from=previous).run(cases)
    assert pipe.calls == ["question 2"] and result.stats.resumed == 2
    _, records = read_run_jsonl(tmp_path / "new.jsonl")
    assert sorted(r.case.id for r in records) == [c.id for c in cases]


def test_records_with_nan_and_inf_round_trip(tmp_path) -> None:
    record = CaseRecord(
        case=Case(id="n", question="q"),
        call_key="k",
        output=PipelineOutput(answer="a", latency_s=float("nan")),
        duration_s=float("inf"),
        verdict={"f1": float("nan"), "x": [-math.inf]},
    )
    line = dump_json_line(record)
    assert "NaN" in line and "null" not in line.split('"verdict"')[1]
    path = tmp_path / "run.jsonl"
    with RunLogWriter(path, header()) as log:
        log.append(record)
    _, (back,) = read_run_jsonl(path)
    assert math.isnan(back.output.latency_s) and back.duration_s == math.inf
    assert math.isnan(back.verdict["f1"]) and back.verdict["x"] == [-math.inf]
    # Finite records are exactly pydantic's own JSON.
    finite = record.model_copy(
        update={"duration_s": 1.5, "verdict": {}, "output": PipelineOutput(answer="a")}
    )
    assert dump_json_line(finite) == finite.model_dump_json()


def test_append_after_close_is_an_error(tmp_path) -> None:
    log = RunLogWriter(tmp_path / "run.jsonl", header())
    log.close()
    with pytest.raises(ValueError, match="closed"):
        log.append(CaseRecord(case=Case(id="a", question="q"), call_key="k"))

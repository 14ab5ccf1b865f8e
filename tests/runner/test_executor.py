"""The runner: order, concurrency, timeouts, retries, cache, de-duplication, errors, progress.

The pipelines here are small fakes: they exist to force what a real pipeline cannot produce on
demand (a failure on the n-th call, a measured number of calls in flight)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from probeguard.core.cases import Case
from probeguard.core.errors import PipelineCallError
from probeguard.core.pipeline import Capability, PipelineOutput, Variation
from probeguard.core.records import RunHeader
from probeguard.log.writer import RunLogWriter, read_run_jsonl
from probeguard.runner import ResponseCache, RetryPolicy, Runner, RunnerConfig, is_transient
from probeguard.runner.executor import MESSAGE_LIMIT

FAST_RETRY = RetryPolicy(retries=3, base_s=0.001, max_s=0.01)


class FakePipeline:
    """Async pipeline: answers ``"A:" + question`` after ``delay(question)`` seconds and
    counts calls and the largest number of calls in flight."""

    name = "fake"

    def __init__(
        self,
        *,
        delay=lambda q: 0.0,
        fail=None,
        capabilities: frozenset[Capability] = frozenset(),
        version: str = "1",
    ) -> None:
        self.delay = delay
        self.fail = fail  # (question, attempt number) -> exception or None
        self.capabilities = capabilities
        self.version = version
        self.calls: list[str] = []
        self.completed: list[str] = []
        self.call_times: dict[str, list[float]] = {}
        self.in_flight = 0
        self.max_in_flight = 0

    def fingerprint(self) -> str:
        return f"fake-{self.version}"

    async def aanswer(self, question: str, variation: Variation | None = None) -> PipelineOutput:
        self.calls.append(question)
        self.call_times.setdefault(question, []).append(time.monotonic())
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay(question))
            if self.fail is not None:
                exc = self.fail(question, len(self.call_times[question]))
                if exc is not None:
                    raise exc
            self.completed.append(question)
            return PipelineOutput(
                answer="A:" + question,
                metadata={
                    "variation": None if variation is None else variation.model_dump(mode="json")
                },
            )
        finally:
            self.in_flight -= 1


class SyncPipeline:
    """Sync-only pipeline (runs in the runner's threads), tracking threads in flight."""

    name = "sync"
    capabilities: frozenset[Capability] = frozenset()

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.calls = 0

    def fingerprint(self) -> str:
        return "sync-1"

    def answer(self, question: str, variation: Variation | None = None) -> PipelineOutput:
        with self.lock:
            self.calls += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            time.sleep(self.delay)
            return PipelineOutput(answer=question.upper())
        finally:
            with self.lock:
                self.in_flight -= 1


def make_cases(n: int, prefix: str = "q") -> list[Case]:
    return [Case(id=f"case-{i:03d}", question=f"{prefix} {i}") for i in range(n)]


async def test_records_keep_input_order_not_completion_order() -> None:
    # Later cases finish first: delay decreases with the index. The 20 ms steps leave room
    # for a loaded CI machine to pause between starting two calls (2 ms steps did not).
    n = 12
    pipe = FakePipeline(delay=lambda q: 0.02 * (n - int(q.split()[1])))
    cases = make_cases(n)
    result = await Runner(pipe, RunnerConfig(concurrency=n)).arun(cases)
    assert [r.case.id for r in result.records] == [c.id for c in cases]
    assert [r.output.answer for r in result.records] == [f"A:q {i}" for i in range(n)]
    assert pipe.completed == [f"q {i}" for i in reversed(range(n))]
    s = result.stats
    assert (s.cases, s.calls, s.cache_hits, s.resumed, s.retries, s.errors) == (n, n, 0, 0, 0, 0)
    assert all(r.attempts == 1 and not r.cached for r in result.records)


async def test_concurrency_limit_is_respected_and_reached() -> None:
    pipe = FakePipeline(delay=lambda q: 0.01)
    result = await Runner(pipe, RunnerConfig(concurrency=4)).arun(make_cases(24))
    assert pipe.max_in_flight == 4
    assert result.stats.calls == 24


def test_sync_pipeline_runs_in_threads_up_to_concurrency() -> None:
    # 8 exceeds the default to_thread pool on a 2-core machine (min(32, cpus + 4) = 6).
    pipe = SyncPipeline(delay=0.1)
    result = Runner(pipe, RunnerConfig(concurrency=8)).run(make_cases(16))
    assert pipe.max_in_flight == 8
    assert pipe.calls == 16
    assert [r.output.answer for r in result.records] == [f"Q {i}" for i in range(16)]


async def test_timeout_is_recorded_as_a_transient_error_and_retried() -> None:
    pipe = FakePipeline(delay=lambda q: 5.0 if q == "q 1" else 0.0)
    config = RunnerConfig(timeout_s=0.05, retry=RetryPolicy(retries=1, base_s=0.001))
    result = await Runner(pipe, config).arun(make_cases(3))
    bad = result.records[1]
    assert bad.output is None
    assert bad.error.type == "TimeoutError"
    assert bad.error.transient
    assert "0.05 s" in bad.error.message
    assert bad.attempts == 2
    assert result.records[0].ok and result.records[2].ok
    assert (result.stats.calls, result.stats.retries, result.stats.errors) == (4, 1, 1)


async def test_a_pipelines_own_timeout_error_is_transient_too() -> None:
    pipe = FakePipeline(fail=lambda q, n: TimeoutError("upstream timed out") if n == 1 else None)
    result = await Runner(pipe, RunnerConfig(retry=FAST_RETRY)).arun(make_cases(1))
    assert result.records[0].ok and result.records[0].attempts == 2


async def test_transient_failures_are_retried_then_succeed() -> None:
    pipe = FakePipeline(
        fail=lambda q, n: PipelineCallError("flaky", transient=True) if n <= 2 else None
    )
    result = await Runner(pipe, RunnerConfig(retry=FAST_RETRY)).arun(make_cases(5))
    assert all(r.ok for r in result.records)
    assert all(r.attempts == 3 for r in result.records)
    assert (result.stats.calls, result.stats.retries, result.stats.errors) == (15, 10, 0)


async def test_transient_failures_give_up_after_the_retries() -> None:
    pipe = FakePipeline(fail=lambda q, n: PipelineCallError("down", transient=True, status=503))
    config = RunnerConfig(retry=RetryPolicy(retries=2, base_s=0.001))
    result = await Runner(pipe, config).arun(make_cases(2))
    assert [r.attempts for r in result.records] == [3, 3]
    err = result.records[0].error
    assert (err.type, err.message, err.transient) == ("PipelineCallError", "down", True)
    assert result.stats.errors == 2 and result.stats.retries == 4


async def test_non_transient_failures_are_not_retried() -> None:
    pipe = FakePipeline(fail=lambda q, n: ValueError("bad input " + "x" * 2000))
    result = await Runner(pipe, RunnerConfig(retry=FAST_RETRY)).arun(make_cases(3))
    assert len(pipe.calls) == 3
    for r in result.records:
        assert r.attempts == 1
        assert r.error.type == "ValueError" and not r.error.transient
        assert r.error.message.startswith("bad input xxx")
        assert len(r.error.message) == MESSAGE_LIMIT
    assert result.stats.retries == 0


async def test_retry_after_is_honoured() -> None:
    hint = 0.25
    pipe = FakePipeline(
        fail=lambda q, n: (
            PipelineCallError("slow down", transient=True, retry_after=hint, status=429)
            if n == 1
            else None
        )
    )
    # The backoff alone would wait 1 ms: only the hint explains a longer wait.
    config = RunnerConfig(retry=RetryPolicy(retries=2, base_s=0.001, max_s=5.0))
    result = await Runner(pipe, config).arun(make_cases(2))
    assert all(r.ok and r.attempts == 2 for r in result.records)
    for times in pipe.call_times.values():
        assert times[1] - times[0] >= hint - 0.01


async def test_wrong_return_type_is_a_recorded_error() -> None:
    class Broken(FakePipeline):
        async def aanswer(self, question, variation=None):  # type: ignore[override]
            return {"answer": "not a PipelineOutput"}

    result = await Runner(Broken()).arun(make_cases(1))
    assert result.records[0].error.type == "TypeError"
    assert "expected PipelineOutput" in result.records[0].error.message


async def test_latency_is_filled_when_the_pipeline_leaves_it_empty() -> None:
    pipe = FakePipeline(delay=lambda q: 0.02)
    result = await Runner(pipe).arun(make_cases(1))
    assert result.records[0].output.latency_s >= 0.015


async def test_second_run_is_served_from_the_cache(tmp_path) -> None:
    cases = make_cases(10)
    first = FakePipeline()
    r1 = await Runner(first, cache=ResponseCache(tmp_path)).arun(cases)
    assert len(first.calls) == 10
    second = FakePipeline()
    r2 = await Runner(second, cache=ResponseCache(tmp_path)).arun(cases)
    assert second.calls == []
    assert [r.output for r in r2.records] == [r.output for r in r1.records]
    assert all(r.cached and r.attempts == 0 for r in r2.records)
    assert (r2.stats.calls, r2.stats.cache_hits) == (0, 10)
    # A different pipeline fingerprint misses the cache.
    other = FakePipeline(version="2")
    await Runner(other, cache=ResponseCache(tmp_path)).arun(cases)
    assert len(other.calls) == 10


async def test_failures_are_not_cached(tmp_path) -> None:
    failing = FakePipeline(fail=lambda q, n: ValueError("no"))
    await Runner(failing, cache=ResponseCache(tmp_path)).arun(make_cases(2))
    healthy = FakePipeline()
    result = await Runner(healthy, cache=ResponseCache(tmp_path)).arun(make_cases(2))
    assert len(healthy.calls) == 2 and all(r.ok and not r.cached for r in result.records)


async def test_identical_calls_in_one_run_are_made_once() -> None:
    pipe = FakePipeline(delay=lambda q: 0.02)
    cases = [Case(id=f"dup-{i}", question="same question", probe="p") for i in range(5)]
    cases.append(Case(id="other", question="another"))
    result = await Runner(pipe, RunnerConfig(concurrency=6)).arun(cases)
    assert sorted(pipe.calls) == ["another", "same question"]
    assert result.stats.cache_hits == 4 and result.stats.calls == 2
    outputs = {r.output.answer for r in result.records[:5]}
    assert outputs == {"A:same question"}
    assert sum(r.cached for r in result.records) == 4
    # The same question with a different variation is a different call.
    pipe2 = FakePipeline(capabilities=frozenset({Capability.PROMPT_OVERRIDE}))
    cases2 = [
        Case(id="a", question="q"),
        Case(id="b", question="q", variation=Variation(prompt="hardened")),
    ]
    await Runner(pipe2).arun(cases2)
    assert len(pipe2.calls) == 2


async def test_a_failed_shared_call_gives_its_error_to_every_duplicate() -> None:
    pipe = FakePipeline(delay=lambda q: 0.01, fail=lambda q, n: ValueError("boom"))
    cases = [Case(id=f"dup-{i}", question="same") for i in range(3)]
    result = await Runner(pipe, RunnerConfig(concurrency=3)).arun(cases)
    assert len(pipe.calls) == 1
    assert [r.error.message for r in result.records] == ["boom"] * 3
    assert result.stats.errors == 3 and result.stats.cache_hits == 0


async def test_unsupported_capability_is_recorded_not_raised() -> None:
    pipe = FakePipeline(capabilities=frozenset({Capability.ORACLE_CONTEXT}))
    cases = [
        Case(id="plain", question="q"),
        Case(id="oracle", question="q", variation=Variation(contexts=("ctx",))),
        Case(id="mask", question="q", variation=Variation(exclude_doc_ids=("d1",))),
    ]
    result = await Runner(pipe).arun(cases)
    plain, oracle, mask = result.records
    assert plain.ok and plain.output.metadata["variation"] is None
    assert oracle.ok and oracle.output.metadata["variation"]["contexts"] == ["ctx"]
    assert mask.error.type == "UnsupportedCapabilityError" and "mask" in mask.error.message
    assert mask.attempts == 0
    assert len(pipe.calls) == 2 and result.stats.errors == 1


async def test_errors_are_never_dropped_and_every_case_is_logged(tmp_path) -> None:
    pipe = FakePipeline(
        delay=lambda q: 0.001 * (int(q.split()[1]) % 4),
        fail=lambda q, n: RuntimeError("fail " + q) if int(q.split()[1]) % 3 == 0 else None,
    )
    cases = make_cases(30)
    header = RunHeader(
        probeguard_version="test", pipeline_name=pipe.name, pipeline_fingerprint=pipe.fingerprint()
    )
    with RunLogWriter(tmp_path / "run.jsonl", header) as log:
        result = await Runner(pipe, RunnerConfig(concurrency=5), log=log).arun(cases)
    failed = [r.case.id for r in result.records if r.error is not None]
    assert failed == [c.id for i, c in enumerate(cases) if i % 3 == 0]
    assert result.stats.errors == 10
    _, logged = read_run_jsonl(tmp_path / "run.jsonl")
    assert sorted(r.case.id for r in logged) == [c.id for c in cases]
    assert {r.case.id: r for r in logged} == {r.case.id: r for r in result.records}


async def test_progress_is_reported_after_each_case() -> None:
    seen: list[tuple[int, int]] = []
    pipe = FakePipeline(capabilities=frozenset())
    cases = make_cases(6) + [Case(id="x", question="q", variation=Variation(prompt="p"))]
    await Runner(
        pipe, RunnerConfig(concurrency=3), progress=lambda done, total: seen.append((done, total))
    ).arun(cases)
    assert seen == [(i, 7) for i in range(1, 8)]


async def test_each_case_is_on_disk_when_progress_reports_it(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    pipe = FakePipeline(delay=lambda q: 0.001 * (int(q.split()[1]) % 3))
    header = RunHeader(
        probeguard_version="test", pipeline_name=pipe.name, pipeline_fingerprint=pipe.fingerprint()
    )
    lines_seen: list[int] = []
    with RunLogWriter(path, header) as log:
        await Runner(
            pipe,
            RunnerConfig(concurrency=3),
            log=log,
            progress=lambda done, total: lines_seen.append(len(path.read_text().splitlines()) - 1),
        ).arun(make_cases(9))
    assert lines_seen == list(range(1, 10))


async def test_a_broken_progress_callback_does_not_stop_the_run() -> None:
    def progress(done: int, total: int) -> None:
        raise RuntimeError("tqdm exploded")

    result = await Runner(FakePipeline(), progress=progress).arun(make_cases(4))
    assert all(r.ok for r in result.records)


async def test_duplicate_case_ids_are_rejected() -> None:
    cases = [Case(id="same", question="a"), Case(id="same", question="b")]
    with pytest.raises(ValueError, match="duplicate case ids: 'same'"):
        await Runner(FakePipeline()).arun(cases)


def test_not_a_pipeline_is_rejected() -> None:
    with pytest.raises(TypeError, match="not a Pipeline"):
        Runner(object())  # type: ignore[arg-type]


# -- retry policy ----------------------------------------------------------------------------


def test_backoff_doubles_and_is_capped() -> None:
    policy = RetryPolicy(retries=10, base_s=0.5, max_s=3.0)
    assert [policy.delay(i) for i in range(5)] == [0.5, 1.0, 2.0, 3.0, 3.0]


def test_retry_after_overrides_the_backoff_but_not_the_cap() -> None:
    policy = RetryPolicy(base_s=0.5, max_s=10.0)
    assert policy.delay(0, PipelineCallError("x", transient=True, retry_after=7.0)) == 7.0
    assert policy.delay(3, PipelineCallError("x", transient=True, retry_after=99.0)) == 10.0
    assert policy.delay(2, PipelineCallError("x", transient=True)) == 2.0


def test_jitter_is_deterministic_per_key_and_attempt_and_bounded() -> None:
    policy = RetryPolicy(base_s=1.0, max_s=100.0, jitter=0.5, seed=7)
    a = [policy.delay(i, key="k1") for i in range(4)]
    assert a == [policy.delay(i, key="k1") for i in range(4)]
    assert a != [policy.delay(i, key="k2") for i in range(4)]
    assert a != [
        RetryPolicy(base_s=1.0, max_s=100.0, jitter=0.5, seed=8).delay(i, key="k1")
        for i in range(4)
    ]
    for i, d in enumerate(a):
        assert 2**i <= d < 1.5 * 2**i


def test_should_retry_counts_attempts_and_transience() -> None:
    policy = RetryPolicy(retries=2)
    transient = PipelineCallError("x", transient=True)
    assert policy.should_retry(0, transient) and policy.should_retry(1, transient)
    assert not policy.should_retry(2, transient)
    assert not policy.should_retry(0, PipelineCallError("x", transient=False))


def test_transient_classification() -> None:
    import aiohttp

    assert is_transient(TimeoutError())
    assert is_transient(TimeoutError())
    assert is_transient(ConnectionResetError())
    assert is_transient(aiohttp.ServerDisconnectedError())
    assert is_transient(PipelineCallError("x", transient=True))
    assert not is_transient(PipelineCallError("x"))
    assert not is_transient(ValueError("x"))
    assert not is_transient(KeyError("x"))

"""The runner writes its cache off the event loop (issue 18): calls go on while an entry is
written, every entry is on disk when ``arun`` returns, and a failed write leaves no entry."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest

from probeguard.core import io as core_io
from probeguard.core.cases import Case
from probeguard.core.pipeline import PipelineOutput, Variation
from probeguard.runner import ResponseCache, Runner, RunnerConfig
from probeguard.runner.cache import CacheWriter

N = 12


class EchoPipeline:
    """Answers at once and sets ``all_called`` once it has been called ``n`` times."""

    name = "echo"
    capabilities: frozenset[str] = frozenset()

    def __init__(self, n: int) -> None:
        self.n = n
        self.calls = 0
        self.all_called = threading.Event()

    def fingerprint(self) -> str:
        return "echo-1"

    async def aanswer(self, question: str, variation: Variation | None = None) -> PipelineOutput:
        self.calls += 1
        if self.calls >= self.n:
            self.all_called.set()
        await asyncio.sleep(0)
        return PipelineOutput(answer="A:" + question)


class WaitingCache(ResponseCache):
    """A cache whose first write waits (up to 2 s) for every call to have been made, and
    which records the thread of each write. On the event loop that wait would stall every
    call, so ``saw_all_calls`` would be False."""

    def __init__(self, directory, pipeline: EchoPipeline) -> None:
        super().__init__(directory)
        self.pipeline = pipeline
        self.saw_all_calls: bool | None = None
        self.threads: set[int] = set()

    def put(self, key: str, output: PipelineOutput) -> None:
        self.threads.add(threading.get_ident())
        if self.saw_all_calls is None:
            self.saw_all_calls = self.pipeline.all_called.wait(2.0)
        super().put(key, output)


def cases(n: int = N) -> list[Case]:
    return [Case(id=f"c{i}", question=f"q {i}") for i in range(n)]


async def test_calls_go_on_while_an_entry_is_written_and_all_are_on_disk_at_the_end(
    tmp_path,
) -> None:
    pipeline = EchoPipeline(N)
    cache = WaitingCache(tmp_path, pipeline)
    result = await Runner(pipeline, RunnerConfig(concurrency=4), cache=cache).arun(cases())
    assert cache.saw_all_calls is True
    assert threading.get_ident() not in cache.threads
    assert pipeline.calls == N and result.stats.errors == 0
    # every entry is complete on disk when arun returns
    fresh = ResponseCache(tmp_path)
    for record in result.records:
        assert fresh.get(record.call_key) == record.output
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == sorted(
        f"{r.call_key}.json" for r in result.records
    )


def test_a_failed_write_leaves_no_entry_and_no_temporary_file(
    tmp_path, monkeypatch, caplog
) -> None:
    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(core_io.os, "replace", broken_replace)
    cache = ResponseCache(tmp_path)
    with caplog.at_level(logging.WARNING, logger="probeguard.runner.cache"):
        result = Runner(EchoPipeline(3), cache=cache).run(cases(3))
    assert result.stats.errors == 0  # a cache that cannot write is only a miss
    assert all(cache.get(r.call_key) is None for r in result.records)
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []
    assert sum("cannot write" in r.getMessage() for r in caplog.records) == 3


def test_an_interrupted_write_leaves_no_entry(tmp_path, monkeypatch) -> None:
    """A write stopped between the temporary file and the rename (as a killed process
    would be) leaves nothing a reader could take for an entry."""

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(core_io.os, "replace", interrupted)
    cache = ResponseCache(tmp_path)
    key = cases(1)[0].call_key("echo-1")
    with pytest.raises(KeyboardInterrupt):
        cache.put(key, PipelineOutput(answer="x"))
    assert cache.get(key) is None
    assert not cache.path_for(key).exists()


async def test_writer_drain_waits_for_every_submitted_entry(tmp_path) -> None:
    cache = ResponseCache(tmp_path)
    writer = CacheWriter(cache)
    keys = [c.call_key("fp") for c in cases(50)]
    for i, key in enumerate(keys):
        writer.submit(key, PipelineOutput(answer=str(i)))
    await writer.drain()
    writer.close()
    assert [cache.get(k) for k in keys] == [PipelineOutput(answer=str(i)) for i in range(50)]


class CountingCache(ResponseCache):
    def __init__(self, directory) -> None:
        super().__init__(directory)
        self.reads = 0

    def get(self, key: str) -> PipelineOutput | None:
        self.reads += 1
        return super().get(key)


def test_existing_lists_the_keys_with_an_entry(tmp_path) -> None:
    cache = ResponseCache(tmp_path)
    keys = [c.call_key("fp") for c in cases(40)]
    for key in keys[::3]:
        cache.put(key, PipelineOutput(answer="x"))
    assert cache.existing(keys) == set(keys[::3])
    assert ResponseCache(tmp_path / "absent").existing(keys) == set()


def test_a_miss_reads_nothing_and_a_hit_reads_its_entry(tmp_path) -> None:
    first = CountingCache(tmp_path)
    Runner(EchoPipeline(N), cache=first).run(cases())
    assert first.reads == 0  # a fresh cache: every case a miss, no file opened for it
    second = CountingCache(tmp_path)
    result = Runner(EchoPipeline(N), cache=second).run(cases())
    assert second.reads == N and result.stats.cache_hits == N

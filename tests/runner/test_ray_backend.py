"""The Ray backend on a real local Ray instance (2 CPUs): a scan's report byte-identical to
a local run, a cluster-wide limit that holds across actors (counted by a real HTTP server on
127.0.0.1), resume from the response cache, and failures that end as errors, not hangs."""

from __future__ import annotations

import functools
import json
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from probeguard.config.models import ScanConfig
from probeguard.core.cases import Case
from probeguard.core.records import CaseRecord, RunHeader
from probeguard.engine.scan import scan
from probeguard.log.writer import RunLogWriter, read_run_jsonl
from probeguard.pipeline.adapters.http import HttpPipeline
from probeguard.runner import ResponseCache, RunnerConfig
from probeguard.runner.ray_backend import RayRunError, RayRunner
from probeguard.runner.settings import RaySettings

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def local_ray(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One local Ray instance for the module (its temp files under pytest's), shut down after."""
    temp = tmp_path_factory.mktemp("ray")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _temp_dir=str(temp),
        log_to_driver=False,
        logging_level=logging.WARNING,
    )
    try:
        yield
    finally:
        ray.shutdown()


@dataclass
class Counter:
    delay_s: float = 0.0
    now: int = 0
    peak: int = 0
    total: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


@pytest.fixture
def server() -> Iterator[tuple[str, Counter]]:
    """A JSON endpoint answering ``{"answer": "A: <question>"}`` after ``delay_s``, counting
    requests and the most in flight at once."""
    counter = Counter()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with counter.lock:
                counter.now += 1
                counter.total += 1
                counter.peak = max(counter.peak, counter.now)
            time.sleep(counter.delay_s)
            with counter.lock:
                counter.now -= 1
            data = json.dumps({"answer": f"A: {body['question']}"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/answer", counter
    finally:
        httpd.shutdown()
        httpd.server_close()


def _cases(n: int) -> list[Case]:
    return [Case(id=f"c{i:03d}", question=f"question {i}") for i in range(n)]


def _runner(url: str, cache: Path | None = None, **ray_settings: object) -> RayRunner:
    settings = RaySettings.model_validate({"workers": 2, "batch_size": 4, **ray_settings})
    return RayRunner(
        functools.partial(HttpPipeline, url),
        HttpPipeline(url).fingerprint(),
        RunnerConfig(concurrency=4, timeout_s=30),
        settings,
        cache_dir=cache,
    )


def test_cluster_wide_limit_holds_across_actors(local_ray: None, server) -> None:
    url, counter = server
    counter.delay_s = 0.15
    result = _runner(url, cluster_concurrency=2).run(_cases(16))
    assert [r.error for r in result.records] == [None] * 16
    assert counter.total == 16 and counter.peak == 2
    counter.peak = 0
    _runner(url).run(_cases(16))  # without the limit, 2 actors x concurrency 4
    assert counter.peak > 2


def test_resume_after_a_crash_calls_nothing_already_cached(
    local_ray: None, server, tmp_path: Path
) -> None:
    url, counter = server
    cases = _cases(12)
    first = _runner(url, tmp_path / "cache").run(cases[:5])  # the run "crashed" here
    assert first.stats.calls == 5 and counter.total == 5
    progress: list[tuple[int, int]] = []
    runner = _runner(url, tmp_path / "cache")
    runner.progress = lambda done, total: progress.append((done, total))
    second = runner.run(cases)
    assert counter.total == 12  # only the 7 cases not cached were called
    assert (second.stats.calls, second.stats.cache_hits) == (7, 5)
    assert [r.case.id for r in second.records] == [c.id for c in cases]
    assert [r.output.answer for r in second.records if r.output] == [
        f"A: {c.question}" for c in cases
    ]
    assert [p[0] for p in progress] == [4, 8, 12] and {p[1] for p in progress} == {12}
    key = cases[0].call_key(HttpPipeline(url).fingerprint())
    assert key in ResponseCache(tmp_path / "cache")


def test_resume_from_the_run_log_runs_only_what_is_missing(
    local_ray: None, server, tmp_path: Path
) -> None:
    url, counter = server
    fingerprint = HttpPipeline(url).fingerprint()
    header = RunHeader(
        probeguard_version="test",
        pipeline_name="http",
        pipeline_fingerprint=fingerprint,
        corpus_fingerprint="none",
    )
    path, cases = tmp_path / "run.jsonl", _cases(10)
    writer = RunLogWriter(path, header)
    first = _runner(url)
    first.log = writer
    first.run(cases[:6])  # no response cache: only the log remembers
    writer.close()
    writer = RunLogWriter(path, header, resume=True)
    second = _runner(url)
    second.log, second.resume_from = writer, writer.finished()
    result = second.run(cases)
    writer.close()
    assert counter.total == 10 and (result.stats.resumed, result.stats.calls) == (6, 4)
    logged = [r.case.id for r in read_run_jsonl(path)[1]]
    assert sorted(logged) == [c.id for c in cases]  # each case once: resumed ones not rewritten


def test_a_batch_that_hangs_ends_as_case_errors(local_ray: None, server) -> None:
    url, counter = server
    counter.delay_s = 5.0
    result = _runner(url, batch_timeout_s=1.0, workers=1, batch_size=2).run(_cases(4))
    errors = [r.error for r in result.records]
    assert all(e is not None and e.transient for e in errors)
    assert {e.type for e in errors if e} == {"TimeoutError", "RuntimeError"}  # then no worker left
    assert result.stats.errors == 4


def test_a_worker_that_cannot_build_its_pipeline_is_a_clear_run_error(local_ray: None) -> None:
    runner = RayRunner(
        functools.partial(HttpPipeline, "not-a-url"),
        "fp",
        RunnerConfig(),
        RaySettings(workers=1),
    )
    with pytest.raises(RayRunError, match="could not build the pipeline"):
        runner.run(_cases(1))


def _demo_config(cache: Path, backend: str) -> ScanConfig:
    """The demo corpus with every default probe, through the hashing embedder (the MiniLM
    demo takes minutes on 2 shared cores; the Ray path is the same)."""
    return ScanConfig(
        demo=True,
        runner={"cache_dir": str(cache), "backend": backend, "ray": {"batch_size": 64}},
        pipeline={"reference": {"embedder": {"name": "hashing", "dim": 1024}}},
    )


def test_demo_scan_through_ray_writes_the_local_report(local_ray: None, tmp_path: Path) -> None:
    local = scan(_demo_config(tmp_path / "cache-local", "local"), tmp_path / "local")
    on_ray = scan(_demo_config(tmp_path / "cache-ray", "ray"), tmp_path / "ray")
    assert on_ray.report_path.read_bytes() == local.report_path.read_bytes()
    assert [_comparable(r) for r in on_ray.run.records] == [
        _comparable(r) for r in local.run.records
    ]
    assert on_ray.run.stats.calls == local.run.stats.calls
    assert on_ray.run.stats.cache_hits == local.run.stats.cache_hits


def _comparable(record: CaseRecord) -> tuple[object, ...]:
    """A record without its clock readings (``duration_s``, ``latency_s``)."""
    output = None if record.output is None else record.output.model_dump(exclude={"latency_s"})
    return record.case.id, record.call_key, output, record.error, record.cached, record.attempts

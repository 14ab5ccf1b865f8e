"""Runner throughput against an HTTP pipeline with 50 ms latency on 127.0.0.1.

A real aiohttp server (its own process, so it does not share the clients' event loop) answers
``POST /ask`` after 50 ms. Three clients send the same ``--cases`` questions at concurrency 32,
taking turns for ``--rounds`` rounds (each in a fresh event loop, after one warm-up batch);
the figures are the medians of cases/s:

* ``Runner`` + ``HttpPipeline``, response cache off and on (a fresh cache folder a round, so
  every case is a call and a cache write);
* the baseline: a plain aiohttp client (one ``ClientSession``, no connection limit, an
  ``asyncio.Semaphore`` of 32 around each ``POST`` + ``json()``), i.e. what the runner's
  HTTP path could reach with no records, keys, cache or log.

Each runner figure is printed with its ratio to the plain client measured in the same run,
and the plain client with its ratio to the ideal, concurrency ÷ latency = 640 cases/s. Then
each client's CPU a case (``time.process_time`` of this process, all its threads, over a
round; median): less moved by other load on the machine than cases/s. Each client's input
(the questions; for the runner, cases holding them) is made before its clock starts.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import socket
import statistics
import tempfile
import time
from typing import Any

from benchmarks._common import report


def _serve(port: int, delay_s: float, ready: mp.synchronize.Event) -> None:
    from aiohttp import web

    async def ask(request: web.Request) -> web.Response:
        body = await request.json()
        await asyncio.sleep(delay_s)
        return web.json_response(
            {"answer": f"echo: {body['question']}", "contexts": [{"text": "ctx", "doc_id": "d1"}]}
        )

    async def main() -> None:
        app = web.Application()
        app.router.add_post("/ask", ask)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port, backlog=1024).start()
        ready.set()
        await asyncio.Event().wait()

    asyncio.run(main())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _plain_aiohttp(url: str, questions: list[str], concurrency: int) -> None:
    """POST every question with one session and a semaphore; read each JSON answer."""
    import aiohttp

    async def main() -> None:
        gate = asyncio.Semaphore(concurrency)
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as session:

            async def ask(question: str) -> None:
                async with gate, session.post(url, json={"question": question}) as resp:
                    resp.raise_for_status()
                    await resp.json()

            await asyncio.gather(*(ask(q) for q in questions))

    asyncio.run(main())


def _cases(questions: list[str]) -> list[Any]:
    """The questions as cases: the runner's input, made before its clock starts, as the
    plain client's list of questions is."""
    from probeguard.core.cases import Case

    return [Case(id=f"c{i}", question=q) for i, q in enumerate(questions)]


def _runner(url: str, cases: list[Any], concurrency: int, cache_root: str | None) -> None:
    """The same questions, as cases, through ``Runner`` + ``HttpPipeline``."""
    from probeguard.pipeline.adapters.http import HttpPipeline
    from probeguard.runner import ResponseCache
    from probeguard.runner.executor import Runner, RunnerConfig

    cache = ResponseCache(tempfile.mkdtemp(dir=cache_root)) if cache_root else None
    pipeline = HttpPipeline(url, contexts_path="contexts[*]")
    runner = Runner(pipeline, RunnerConfig(concurrency=concurrency, timeout_s=30), cache=cache)
    result = runner.run(cases)
    assert result.stats.errors == 0 and result.stats.calls == len(cases), result.stats


def run(cases: int = 1280, concurrency: int = 32, delay_s: float = 0.05, rounds: int = 3) -> None:
    port = _free_port()
    ready = mp.Event()
    server = mp.Process(target=_serve, args=(port, delay_s, ready), daemon=True)
    server.start()
    url = f"http://127.0.0.1:{port}/ask"
    times: dict[str, list[float]] = {name: [] for name in CLIENTS}
    cpu: dict[str, list[float]] = {name: [] for name in CLIENTS}
    try:
        if not ready.wait(30):
            raise RuntimeError("benchmark server did not start")
        with tempfile.TemporaryDirectory() as cache_root:
            clients = {
                "plain aiohttp client": lambda qs: _plain_aiohttp(url, qs, concurrency),
                "runner, cache off": lambda qs: _runner(url, qs, concurrency, None),
                "runner, cache on": lambda qs: _runner(url, qs, concurrency, cache_root),
            }
            for name in CLIENTS:  # warm-up: imports, first connections
                clients[name](_inputs(name, [f"warm {i}" for i in range(concurrency)]))
            for r in range(rounds):
                questions = [f"question {r} {i}" for i in range(cases)]
                for name in CLIENTS:
                    inputs = _inputs(name, questions)
                    start, cpu_start = time.perf_counter(), time.process_time()
                    clients[name](inputs)
                    times[name].append(time.perf_counter() - start)
                    cpu[name].append(time.process_time() - cpu_start)
    finally:
        server.terminate()
        server.join()
    rate = {name: cases / statistics.median(t) for name, t in times.items()}
    where = f"over HTTP (50 ms, concurrency {concurrency}, {cases} cases, median of {rounds})"
    report(
        f"plain aiohttp client {where}",
        rate["plain aiohttp client"],
        "cases/s",
        "ideal concurrency/latency",
        concurrency / delay_s,
        higher_is_better=True,
    )
    for name in CLIENTS[1:]:
        report(
            f"{name} {where}",
            rate[name],
            "cases/s",
            "plain aiohttp client",
            rate["plain aiohttp client"],
            higher_is_better=True,
        )
    for name in CLIENTS:
        per_case_us = statistics.median(cpu[name]) / cases * 1e6
        print(f"{name}: CPU per case {per_case_us:.0f} us (median of {rounds})", flush=True)


CLIENTS = ("plain aiohttp client", "runner, cache off", "runner, cache on")


def _inputs(name: str, questions: list[str]) -> list[Any]:
    return questions if name == CLIENTS[0] else _cases(questions)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=1280)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    run(args.cases, args.concurrency, rounds=args.rounds)

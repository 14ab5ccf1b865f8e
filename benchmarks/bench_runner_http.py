"""Runner throughput against an HTTP pipeline with 50 ms latency on 127.0.0.1.

Figure: cases/s through ``Runner`` + ``HttpPipeline`` at concurrency 32 (cache off).
Baseline: the ideal, concurrency ÷ latency = 640 cases/s.
The server runs in its own process so that it does not share the client's event loop.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import socket
import time

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


def run(cases: int = 1280, concurrency: int = 32, delay_s: float = 0.05) -> float:
    from probeguard.core.cases import Case
    from probeguard.pipeline.adapters.http import HttpPipeline
    from probeguard.runner.executor import Runner, RunnerConfig

    port = _free_port()
    ready = mp.Event()
    server = mp.Process(target=_serve, args=(port, delay_s, ready), daemon=True)
    server.start()
    try:
        if not ready.wait(30):
            raise RuntimeError("benchmark server did not start")
        pipeline = HttpPipeline(f"http://127.0.0.1:{port}/ask", contexts_path="contexts[*]")
        runner = Runner(pipeline, RunnerConfig(concurrency=concurrency, timeout_s=30))
        runner.run([Case(id=f"w{i}", question=f"warm {i}") for i in range(concurrency)])
        batch = [Case(id=f"c{i}", question=f"question {i}") for i in range(cases)]
        start = time.perf_counter()
        result = runner.run(batch)
        elapsed = time.perf_counter() - start
        assert result.stats.errors == 0, result.stats
    finally:
        server.terminate()
        server.join()
    throughput = cases / elapsed
    report(
        f"runner over HTTP (50 ms, concurrency {concurrency}, {cases} cases)",
        throughput,
        "cases/s",
        "ideal concurrency/latency",
        concurrency / delay_s,
        higher_is_better=True,
    )
    return throughput


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=1280)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    run(args.cases, args.concurrency)

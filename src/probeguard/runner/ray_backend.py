"""The Ray backend (``runner.backend: ray``, needs ``probeguard[ray]``): a scan's cases run
on Ray actors, each holding its own pipeline, and come back as the records a local
``Runner`` would have written.

How a run goes:

1. **Connect.** To ``runner.ray.address`` when set; else a local Ray instance is started
   (``num_cpus``) and shut down when the run ends. An already initialised Ray is used as is.
2. **Shard.** The driver computes every case's call key with its own pipeline's
   fingerprint and cuts the cases into batches (``runner.shards.shard``: case-id order,
   cases sharing a call key in one batch).
3. **Workers.** ``workers`` actors (``cpus_per_worker`` CPUs each) build the pipeline once,
   in ``__init__``, from a picklable factory (never a pickled live pipeline); each reports
   its pipeline's fingerprint, which must equal the driver's (same config, data and
   models), else the run stops with a ``RayRunError``. Startup is bounded by
   ``startup_timeout_s`` (too few CPUs in the cluster is an error, not a hang).
4. **Batches.** An idle worker takes the next batch and runs it with the existing async
   ``Runner`` (same concurrency, timeout, retries), reading and writing the
   content-addressed ``ResponseCache`` — on a shared filesystem for a multi-node cluster —
   so a re-run after a crash calls nothing already cached. ``--resume`` records are passed
   to the batch they belong to. With ``cluster_concurrency`` and/or ``cluster_rate_per_s``
   every attempt also holds a slot of one cluster-wide actor (``_Slots``: a semaphore and a
   pace), so an endpoint's quota holds across workers; the wait for a slot does not count
   towards ``timeout_s``.
5. **Merge.** As each batch comes back its records are appended to the run log and
   ``progress(done, total)`` is called; the records are merged by case id into the input
   order (``runner.shards.merge_records``), so the scan's reports are those of a local run.
   A batch whose worker died or did not answer within ``batch_timeout_s`` becomes one
   ``CaseError`` per case (type ``RayActorError``, ``TimeoutError``, ...; transient), and
   that worker is dropped; with no worker left, the remaining batches fail the same way.
"""

from __future__ import annotations

import asyncio
import importlib
import itertools
import logging
import math
import sys
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from probeguard.core.cases import Case
from probeguard.core.errors import MissingExtraError, ProbeGuardError
from probeguard.core.pipeline import Pipeline
from probeguard.core.records import CaseRecord, RunStats
from probeguard.log.writer import RunLogWriter, as_logged
from probeguard.runner.cache import ResponseCache
from probeguard.runner.executor import Runner, RunnerConfig, RunResult, case_error
from probeguard.runner.prepare import prepare_run
from probeguard.runner.settings import RaySettings
from probeguard.runner.shards import failed_batch, merge_records, merge_stats, shard

__all__ = ["PipelineFactory", "RayRunError", "RayRunner", "import_ray"]

logger = logging.getLogger(__name__)

PipelineFactory = Callable[[], Pipeline]
"""Builds the pipeline under test; picklable (a module-level function or a
``functools.partial`` of one over picklable arguments), called once per worker."""


class RayRunError(ProbeGuardError):
    """The Ray backend cannot run: workers did not start or built a different pipeline."""


def import_ray() -> Any:
    """The ``ray`` module; ``MissingExtraError`` naming ``probeguard[ray]`` without it."""
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise MissingExtraError("ray", "ray", hint="runner.backend: ray") from None


class _Slots:
    """The cluster-wide limit (an async Ray actor, 0 CPUs): a semaphore of ``limit`` slots
    (None: no limit on calls in flight), granted in request order, and — with
    ``rate_per_s`` — a pace: granted calls start at least ``1 / rate_per_s`` seconds apart
    (a token bucket of one token; the caller holds its slot while it waits its turn).

    Leases make cancellation safe: ``release(lease)`` frees a granted slot, withdraws a
    waiting request, or — when it overtakes its ``acquire`` — marks the lease so that the
    ``acquire`` returns at once without a slot. A caller cancelled while it waits never
    leaks a slot."""

    def __init__(
        self,
        limit: int | None,
        rate_per_s: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._free = sys.maxsize if limit is None else limit
        self._interval = 0.0 if rate_per_s is None else 1.0 / rate_per_s
        self._next_start = -math.inf
        self._clock = clock
        self._sleep = sleep
        self._waiters: deque[tuple[str, asyncio.Future[None]]] = deque()
        self._held: set[str] = set()
        self._cancelled: set[str] = set()
        self._peak = 0

    async def acquire(self, lease: str) -> bool:
        """Wait for a slot and its turn; False when the lease was released before it was
        asked for."""
        if lease in self._cancelled:
            self._cancelled.discard(lease)
            return False
        if self._free > 0 and not self._waiters:
            self._grant(lease)
        else:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append((lease, waiter))
            await waiter  # granted by _wake
        await self._pace()
        return True

    async def _pace(self) -> None:
        """Wait until ``interval`` after the previous granted start (none without a rate)."""
        if not self._interval:
            return
        now = self._clock()
        start = max(now, self._next_start)
        self._next_start = start + self._interval
        if start > now:
            await self._sleep(start - now)

    async def release(self, lease: str) -> None:
        if lease in self._held:
            self._held.discard(lease)
            self._free += 1
            self._wake()
            return
        for item in self._waiters:
            if item[0] == lease:
                self._waiters.remove(item)
                item[1].cancel()
                return
        self._cancelled.add(lease)

    async def usage(self) -> tuple[int, int]:
        """Slots held now, and the most ever held at once."""
        return len(self._held), self._peak

    def _grant(self, lease: str) -> None:
        self._free -= 1
        self._held.add(lease)
        self._peak = max(self._peak, len(self._held))

    def _wake(self) -> None:
        while self._free > 0 and self._waiters:
            lease, waiter = self._waiters.popleft()
            if not waiter.done():
                self._grant(lease)
                waiter.set_result(None)


_leases = itertools.count()


@asynccontextmanager
async def cluster_slot(slots: Any, owner: str) -> AsyncIterator[None]:
    """Hold one slot of the ``_Slots`` actor ``slots`` for the body (released on any exit,
    cancellation included)."""
    lease = f"{owner}-{next(_leases)}"
    try:
        await slots.acquire.remote(lease)
        yield
    finally:
        slots.release.remote(lease)


class _Worker:
    """One Ray actor: a pipeline built once, then any number of batches through a
    ``Runner`` (log-less: the driver writes the run log)."""

    def __init__(
        self,
        factory: PipelineFactory,
        config: RunnerConfig,
        cache_dir: str | None,
        slots: Any,
        owner: str,
    ) -> None:
        self.pipeline = factory()
        self.config = config
        self.cache = ResponseCache(cache_dir) if cache_dir else None
        self.slots = slots
        self.owner = owner

    def fingerprint(self) -> str:
        return self.pipeline.fingerprint()

    def run(self, cases: list[Case], resume_from: dict[str, CaseRecord]) -> RunResult:
        gate = None if self.slots is None else self._gate
        runner = Runner(
            self.pipeline, self.config, cache=self.cache, resume_from=resume_from, gate=gate
        )
        prepare_run(runner, cases)  # this worker's indexes, before its batch's calls
        return runner.run(cases)

    def _gate(self) -> Any:
        return cluster_slot(self.slots, self.owner)


@dataclass
class _Dispatch:
    """Mutable state of one run on the driver."""

    cases: list[Case]
    keys: list[str]
    batches: list[list[int]]
    logged: Mapping[str, CaseRecord]
    parts: list[RunResult] = field(default_factory=list)
    done: int = 0


class RayRunner:
    """Runs cases on Ray actors; the same records, log and stats as a local ``Runner``."""

    def __init__(
        self,
        factory: PipelineFactory,
        fingerprint: str,
        config: RunnerConfig,
        settings: RaySettings,
        *,
        cache_dir: str | Path | None = None,
        log: RunLogWriter | None = None,
        resume_from: Mapping[str, CaseRecord] | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        self.factory = factory
        self.fingerprint = fingerprint
        self.config = config
        self.settings = settings
        self.cache_dir = None if cache_dir is None else str(Path(cache_dir).resolve())
        self.log = log
        self.resume_from: Mapping[str, CaseRecord] = resume_from or {}
        self.progress = progress

    def run(self, cases: Sequence[Case]) -> RunResult:
        """Run ``cases`` (see the module docstring). Raises ``ValueError`` for duplicate
        ids, ``RayRunError`` when the workers cannot start, ``MissingExtraError`` without
        Ray."""
        ray = import_ray()
        cases = list(cases)
        duplicates = sorted(k for k, n in Counter(c.id for c in cases).items() if n > 1)
        if duplicates:
            raise ValueError(f"duplicate case ids: {duplicates[:5]}; case ids must be unique")
        started = time.perf_counter()
        keys = [c.call_key(self.fingerprint) for c in cases]
        state = _Dispatch(
            cases=cases,
            keys=keys,
            batches=shard(cases, keys, self.settings.batch_size),
            logged=self.log.finished() if self.log is not None else {},
        )
        if cases:
            owned = self._connect(ray)
            logger.info("Ray: connected in %.1f s", time.perf_counter() - started)
            try:
                self._run_batches(ray, state)
            finally:
                if owned:
                    ray.shutdown()
        records = merge_records(cases, [p.records for p in state.parts])
        stats = merge_stats(
            [p.stats for p in state.parts],
            cases=len(cases),
            wall_s=time.perf_counter() - started,
        )
        return RunResult(records=records, stats=stats)

    # -- steps ----------------------------------------------------------------------------

    def _connect(self, ray: Any) -> bool:
        """Connect or start Ray; True when this run started it (and must shut it down)."""
        if ray.is_initialized():
            return False
        s = self.settings
        options: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING}
        if s.address is not None:
            ray.init(address=s.address, **options)
        else:
            ray.init(num_cpus=s.num_cpus, include_dashboard=False, **options)
        return True

    def _run_batches(self, ray: Any, state: _Dispatch) -> None:
        n = min(self.settings.workers, len(state.batches))
        limit, rate = self.settings.cluster_concurrency, self.settings.cluster_rate_per_s
        slots = (
            None
            if limit is None and rate is None
            else ray.remote(_Slots).options(num_cpus=0).remote(limit, rate)
        )
        started = time.perf_counter()
        workers: list[Any] = []
        try:
            workers = self._start_workers(ray, n, slots)
            logger.info("Ray: %d workers ready in %.1f s", n, time.perf_counter() - started)
            self._dispatch(ray, state, workers)
            logger.info(
                "Ray: %d batches done in %.1f s", len(state.batches), time.perf_counter() - started
            )
        finally:
            self._kill(ray, [a for a in [*workers, slots] if a is not None])

    def _start_workers(self, ray: Any, n: int, slots: Any) -> list[Any]:
        s = self.settings
        actor = ray.remote(_Worker).options(num_cpus=s.cpus_per_worker, max_restarts=0)
        workers = [
            actor.remote(self.factory, self.config, self.cache_dir, slots, f"w{i}")
            for i in range(n)
        ]
        try:
            prints = ray.get([w.fingerprint.remote() for w in workers], timeout=s.startup_timeout_s)
        except ray.exceptions.GetTimeoutError:
            self._kill(ray, workers)
            raise RayRunError(
                f"{n} Ray workers did not start within {s.startup_timeout_s:g} s "
                f"(runner.ray.startup_timeout_s); the cluster needs {n} x "
                f"{s.cpus_per_worker:g} free CPUs (runner.ray.workers, cpus_per_worker)"
            ) from None
        except ray.exceptions.RayError as exc:
            self._kill(ray, workers)
            raise RayRunError(f"a Ray worker could not build the pipeline: {exc}") from None
        wrong = sorted({p for p in prints if p != self.fingerprint})
        if wrong:
            self._kill(ray, workers)
            raise RayRunError(
                f"the Ray workers built a pipeline with fingerprint {wrong[0]}, the driver's "
                f"is {self.fingerprint}: every node needs the same config, data, models "
                "and versions"
            )
        return workers

    def _dispatch(self, ray: Any, state: _Dispatch, workers: list[Any]) -> None:
        """Hand batches to idle workers until every batch is back or has failed."""
        queue = deque(range(len(state.batches)))
        idle = list(workers)
        inflight: dict[Any, tuple[int, Any, float]] = {}
        timeout_s = self.settings.batch_timeout_s
        while queue or inflight:
            while queue and idle:
                b, worker = queue.popleft(), idle.pop(0)
                ref = worker.run.remote(*self._batch_args(state, b))
                inflight[ref] = (b, worker, time.monotonic() + timeout_s)
            if not inflight:
                error = RuntimeError("no Ray worker left to run this batch")
                while queue:
                    self._fail(state, queue.popleft(), error)
                break
            wait_s = max(0.0, min(d for _, _, d in inflight.values()) - time.monotonic())
            ready, _ = ray.wait(list(inflight), num_returns=1, timeout=wait_s)
            for ref in ready:
                b, worker, _ = inflight.pop(ref)
                try:
                    self._accept(state, ray.get(ref))
                    idle.append(worker)
                except ray.exceptions.RayError as exc:
                    self._kill(ray, [worker])
                    self._fail(state, b, exc)
            now = time.monotonic()
            for ref in [r for r, (_, _, d) in inflight.items() if not ready and d <= now]:
                b, worker, _ = inflight.pop(ref)
                self._kill(ray, [worker])
                message = f"batch not back within {timeout_s:g} s (runner.ray.batch_timeout_s)"
                self._fail(state, b, TimeoutError(message))

    def _batch_args(self, state: _Dispatch, b: int) -> tuple[list[Case], dict[str, CaseRecord]]:
        cases = [state.cases[i] for i in state.batches[b]]
        resume = {c.id: self.resume_from[c.id] for c in cases if c.id in self.resume_from}
        return cases, resume

    def _fail(self, state: _Dispatch, b: int, exc: BaseException) -> None:
        error = case_error(exc).model_copy(update={"transient": True})
        logger.warning("Ray batch %d failed: %s", b, error.message)
        indices = state.batches[b]
        records = failed_batch(
            [state.cases[i] for i in indices], [state.keys[i] for i in indices], error
        )
        self._accept(state, RunResult(records=records, stats=RunStats(errors=len(records))))

    def _accept(self, state: _Dispatch, result: RunResult) -> None:
        """A batch is back: log its records (those the log lacks), report progress."""
        records = [as_logged(r) for r in result.records]
        if self.log is not None:
            for record in records:
                if state.logged.get(record.case.id) != record:
                    self.log.append(record)
        state.parts.append(RunResult(records=records, stats=result.stats))
        state.done += len(records)
        if self.progress is not None:
            try:
                self.progress(state.done, len(state.cases))
            except Exception:
                logger.exception("progress callback failed")
                self.progress = None

    @staticmethod
    def _kill(ray: Any, actors: list[Any]) -> None:
        for actor in actors:
            try:
                ray.kill(actor)
            except Exception as exc:  # already dead
                logger.debug("ray.kill: %s", exc)

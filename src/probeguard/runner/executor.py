"""The runner: the only code that calls a pipeline.

For each case, in this order:

1. **Capabilities.** A variation the pipeline cannot honour becomes a recorded
   ``CaseError(type="UnsupportedCapabilityError")``; nothing is called.
2. **Resume.** A case whose id is in ``resume_from`` with an output *and* the same call key
   is reused as is (``stats.resumed``). It is appended to the log only when the log does not
   already hold that exact record — i.e. not when ``resume_from`` is ``log.finished()`` of the
   same resumed ``run.jsonl`` (the usual ``--resume``), but yes when it came from another
   file, so the log always ends up complete. A resumed case whose call key changed (new
   question, variation or pipeline) or that had failed is run again; its new line supersedes
   the old one.
3. **Cache.** The entries present when the run starts are listed once, off the event loop
   (``ResponseCache.existing``), so a miss costs no file-system call. Identical call keys
   within one run are called once: the first case makes the
   call, the others wait for it (in-flight de-duplication) and, like on-disk cache hits, are
   recorded with ``cached=True, attempts=0`` and counted in ``stats.cache_hits``. (If that
   one call fails, its duplicates carry the same error with ``attempts=0``.)
4. **Call**, at most ``concurrency`` at a time (an ``asyncio.Semaphore`` held per attempt, so
   a case waiting out a retry delay does not hold a slot) and, when one is given, a ``gate``
   (an async context manager entered per attempt inside that slot and before the clock
   starts: the Ray backend's cluster-wide limit), each attempt bounded by ``timeout_s``,
   transient failures retried by ``RetryPolicy``. ``aanswer`` is awaited when the pipeline
   has it; otherwise ``answer`` runs in a thread pool of ``concurrency`` threads (the default
   ``asyncio.to_thread`` pool has only ``min(32, cpus + 4)`` threads, too few for a slow
   remote pipeline). A thread whose call timed out cannot be killed: it runs on
   in the background, its result discarded. Outputs are written to the cache by a
   ``CacheWriter`` thread, off the event loop; ``arun`` returns only once every entry is on
   disk;
   ``latency_s`` is filled with the successful attempt's duration when the pipeline left it
   empty.

Every finished case is appended to the log at once and reported to ``progress(done, total)``.
A failed case is a record with ``CaseError(type, message, transient)``: the message is the
exception's text only (no traceback, no request headers), at most 500 characters. No
exception escapes ``arun`` except cancellation, ``KeyboardInterrupt``/``SystemExit`` and a
failure of the log file itself; after those, the log holds every case that finished.

Records come back in the input order, whatever the completion order. While ``arun`` runs,
young garbage collections run less often (``runner.collector``: the kept records are not
walked every few cases).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import logging
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from probeguard.core.cases import Case
from probeguard.core.errors import UnsupportedCapabilityError
from probeguard.core.pipeline import Pipeline, PipelineOutput, Variation, check_capabilities
from probeguard.core.records import CaseError, CaseRecord, RunStats
from probeguard.log.writer import RunLogWriter, logged_with_line
from probeguard.runner.cache import CacheWriter, ResponseCache
from probeguard.runner.collector import relaxed_young_collections
from probeguard.runner.retry import RetryPolicy, is_transient

__all__ = ["RunnerConfig", "RunResult", "Runner", "MESSAGE_LIMIT"]

logger = logging.getLogger(__name__)

MESSAGE_LIMIT = 500
"""Longest error message kept in a ``CaseError`` (characters)."""


class RunnerConfig(BaseModel):
    """How the runner calls a pipeline."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    concurrency: int = Field(default=8, ge=1)
    """Pipeline calls in flight at once."""
    timeout_s: float | None = Field(default=120.0, gt=0.0)
    """Limit on one attempt (``None``: no limit)."""
    retry: RetryPolicy = Field(default_factory=RetryPolicy)


@dataclass(frozen=True, repr=False)
class RunResult:
    """Records in the input order, and how the run went."""

    records: list[CaseRecord]
    stats: RunStats

    @property
    def errors(self) -> list[CaseRecord]:
        return [r for r in self.records if r.error is not None]

    def __repr__(self) -> str:
        # Short on purpose: Python 3.11's asyncio.run formats the main task's result when
        # it restores the SIGINT handler, and a full repr of 100k records takes seconds.
        return f"RunResult(records=<{len(self.records)} records>, stats={self.stats!r})"


def case_error(exc: BaseException) -> CaseError:
    """A ``CaseError`` for ``exc``: class name, message only (truncated), transient flag."""
    try:
        text = str(exc)
    except Exception:
        text = f"<unprintable {type(exc).__name__}>"
    message = " ".join(text.split()) or type(exc).__name__
    if len(message) > MESSAGE_LIMIT:
        message = message[: MESSAGE_LIMIT - 1] + "…"
    return CaseError(type=type(exc).__name__, message=message, transient=is_transient(exc))


@dataclass
class _Run:
    """Mutable state of one ``arun`` call (the event loop is single-threaded)."""

    total: int
    records: list[CaseRecord | None]
    semaphore: asyncio.Semaphore
    executor: ThreadPoolExecutor | None
    writer: CacheWriter | None
    on_disk: set[str] = field(default_factory=set)
    """Call keys with a cache entry when the run started (``ResponseCache.existing``)."""
    memo: dict[str, asyncio.Future[tuple[PipelineOutput | None, CaseError | None]]] = field(
        default_factory=dict
    )
    done: int = 0
    stats: RunStats = field(default_factory=RunStats)
    """Counters (calls, cache hits, resumed, retries, errors), completed after the run."""


class Runner:
    """Runs cases against a pipeline: concurrency, timeouts, retries, cache, resume, log."""

    def __init__(
        self,
        pipeline: Pipeline,
        config: RunnerConfig | None = None,
        *,
        cache: ResponseCache | None = None,
        log: RunLogWriter | None = None,
        resume_from: Mapping[str, CaseRecord] | None = None,
        progress: Callable[[int, int], None] | None = None,
        gate: Callable[[], AbstractAsyncContextManager[object]] | None = None,
    ) -> None:
        for attr in ("fingerprint", "capabilities"):
            if not hasattr(pipeline, attr):
                raise TypeError(f"{pipeline!r} is not a Pipeline: it has no '{attr}'")
        if not callable(getattr(pipeline, "aanswer", None)) and not callable(
            getattr(pipeline, "answer", None)
        ):
            raise TypeError(
                f"{pipeline!r} is not a Pipeline: it has neither 'answer' nor 'aanswer'"
            )
        self.pipeline = pipeline
        self.config = config or RunnerConfig()
        self.cache = cache
        self.log = log
        self.resume_from: Mapping[str, CaseRecord] = resume_from or {}
        self.progress = progress
        self.gate = gate or nullcontext
        self._progress_failed = False

    # -- public ---------------------------------------------------------------------------

    def run(self, cases: Sequence[Case]) -> RunResult:
        """Synchronous ``arun`` in a fresh event loop; closes the pipeline's per-loop
        resources (``aclose``, e.g. the HTTP session) before the loop ends."""

        async def main() -> RunResult:
            try:
                return await self.arun(cases)
            finally:
                aclose = getattr(self.pipeline, "aclose", None)
                if callable(aclose):
                    await aclose()

        return asyncio.run(main())

    async def arun(self, cases: Sequence[Case]) -> RunResult:
        """Run ``cases``; see the module docstring. Raises ``ValueError`` for duplicate ids.
        Young garbage collections run less often meanwhile (``runner.collector``)."""
        with relaxed_young_collections():
            return await self._arun(list(cases))

    async def _arun(self, cases: list[Case]) -> RunResult:
        duplicates = sorted(k for k, n in Counter(c.id for c in cases).items() if n > 1)
        if duplicates:
            shown = ", ".join(repr(d) for d in duplicates[:5])
            more = f" and {len(duplicates) - 5} more" if len(duplicates) > 5 else ""
            raise ValueError(f"duplicate case ids: {shown}{more}; case ids must be unique")
        started = time.perf_counter()
        fingerprint = self.pipeline.fingerprint()
        keys = [case.call_key(fingerprint) for case in cases]
        native = callable(getattr(self.pipeline, "aanswer", None))
        executor = (
            None
            if native
            else ThreadPoolExecutor(
                max_workers=self.config.concurrency, thread_name_prefix="probeguard-runner"
            )
        )
        state = _Run(
            total=len(cases),
            records=[None] * len(cases),
            semaphore=asyncio.Semaphore(self.config.concurrency),
            executor=executor,
            writer=CacheWriter(self.cache) if self.cache is not None else None,
        )
        loop = asyncio.get_running_loop()
        try:
            pending = self._settle_without_calls(state, cases, keys, loop)
            if self.cache is not None:
                state.on_disk = await asyncio.to_thread(
                    self.cache.existing, [keys[i] for i in pending]
                )
            shared = iter(pending)
            n_workers = min(len(pending), 2 * self.config.concurrency)
            workers = [
                asyncio.create_task(self._worker(state, shared, cases, keys))
                for _ in range(n_workers)
            ]
            try:
                await asyncio.gather(*workers)
            finally:
                for task in workers:
                    task.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
            if state.writer is not None:
                await state.writer.drain()
        finally:
            if executor is not None:
                executor.shutdown(wait=False, cancel_futures=True)
            if state.writer is not None:
                state.writer.close()
        records = [r for r in state.records if r is not None]
        assert len(records) == len(cases), "every case ends as a record"
        stats = state.stats.model_copy(
            update={"cases": len(cases), "wall_s": time.perf_counter() - started}
        )
        return RunResult(records=records, stats=stats)

    # -- steps ----------------------------------------------------------------------------

    def resumable(self, case: Case, key: str) -> CaseRecord | None:
        """The record ``case`` is resumed from (rule 2 of the module docstring: in
        ``resume_from`` with an output under the same call ``key``), or None."""
        prev = self.resume_from.get(case.id)
        if prev is not None and prev.output is not None and prev.call_key == key:
            return prev
        return None

    def _settle_without_calls(
        self, state: _Run, cases: list[Case], keys: list[str], loop: asyncio.AbstractEventLoop
    ) -> list[int]:
        """Capabilities and resume; returns the indices that still need the cache or a call."""
        logged = self.log.finished() if self.log is not None else {}
        pending: list[int] = []
        for i, case in enumerate(cases):
            key = keys[i]
            try:
                check_capabilities(self.pipeline, case.variation)
            except UnsupportedCapabilityError as exc:
                self._finish(state, i, CaseRecord(case=case, call_key=key, error=case_error(exc)))
                continue
            prev = self.resumable(case, key)
            if prev is not None:
                record = prev if prev.case == case else prev.model_copy(update={"case": case})
                in_log = logged.get(case.id)
                state.stats.resumed += 1
                self._finish(state, i, record, write=not (in_log is record or in_log == record))
                if key not in state.memo:
                    done = loop.create_future()
                    done.set_result((prev.output, None))
                    state.memo[key] = done
                continue
            pending.append(i)
        return pending

    async def _worker(self, state: _Run, shared: Any, cases: list[Case], keys: list[str]) -> None:
        for i in shared:  # one iterator shared by all workers: each index is taken once
            record = await self._execute(state, cases[i], keys[i])
            self._finish(state, i, record)

    async def _execute(self, state: _Run, case: Case, key: str) -> CaseRecord:
        started = time.perf_counter()
        inflight = state.memo.get(key)
        if inflight is not None:
            output, error = await asyncio.shield(inflight)
            if output is not None:
                state.stats.cache_hits += 1
            return CaseRecord(
                case=case,
                call_key=key,
                output=output,
                error=error,
                cached=output is not None,
                attempts=0,
                duration_s=time.perf_counter() - started,
            )
        future: asyncio.Future[tuple[PipelineOutput | None, CaseError | None]] = (
            asyncio.get_running_loop().create_future()
        )
        state.memo[key] = future
        try:
            on_disk = self.cache is not None and key in state.on_disk
            cached = self.cache.get(key) if on_disk and self.cache is not None else None
            if cached is not None:
                state.stats.cache_hits += 1
                future.set_result((cached, None))
                return CaseRecord(
                    case=case,
                    call_key=key,
                    output=cached,
                    cached=True,
                    attempts=0,
                    duration_s=time.perf_counter() - started,
                )
            output, error, attempts = await self._call_with_retries(state, case, key)
            if output is not None and state.writer is not None:
                state.writer.submit(key, output)
            future.set_result((output, error))
            return CaseRecord(
                case=case,
                call_key=key,
                output=output,
                error=error,
                attempts=attempts,
                duration_s=time.perf_counter() - started,
            )
        except BaseException:
            if not future.done():
                future.cancel()
            raise

    async def _call_with_retries(
        self,
        state: _Run,
        case: Case,
        key: str,
    ) -> tuple[PipelineOutput | None, CaseError | None, int]:
        policy = self.config.retry
        variation = None if case.variation.is_default() else case.variation
        attempt = 0
        while True:
            async with state.semaphore:
                try:
                    async with self.gate():
                        state.stats.calls += 1
                        t0 = time.perf_counter()
                        output = await self._call_once(state, case.question, variation)
                except Exception as exc:
                    failure: Exception = exc
                else:
                    if output.latency_s is None:
                        output = output.model_copy(update={"latency_s": time.perf_counter() - t0})
                    return output, None, attempt + 1
            if not policy.should_retry(attempt, failure):
                return None, case_error(failure), attempt + 1
            state.stats.retries += 1
            await asyncio.sleep(policy.delay(attempt, failure, key=key))
            attempt += 1

    async def _call_once(
        self, state: _Run, question: str, variation: Variation | None
    ) -> PipelineOutput:
        timeout_s = self.config.timeout_s
        scope = asyncio.timeout(timeout_s)
        try:
            async with scope:
                aanswer = getattr(self.pipeline, "aanswer", None)
                if callable(aanswer):
                    result = aanswer(question, variation)
                    if inspect.isawaitable(result):
                        result = await result
                else:
                    call = functools.partial(
                        contextvars.copy_context().run, self.pipeline.answer, question, variation
                    )
                    result = await asyncio.get_running_loop().run_in_executor(state.executor, call)
        except TimeoutError:
            if scope.expired():
                raise TimeoutError(f"no answer within {timeout_s:g} s (runner timeout_s)") from None
            raise
        if not isinstance(result, PipelineOutput):
            raise TypeError(
                f"pipeline '{getattr(self.pipeline, 'name', '?')}' returned "
                f"{type(result).__name__}, expected PipelineOutput"
            )
        return result

    def _finish(self, state: _Run, i: int, record: CaseRecord, *, write: bool = True) -> None:
        # floats normalised: fresh, cached and resumed runs agree; one serialisation serves
        # the record and its log line
        record, line = logged_with_line(record)
        state.records[i] = record
        if record.error is not None:
            state.stats.errors += 1
        if write and self.log is not None:
            self.log.append(record, line=line)
        state.done += 1
        if self.progress is not None and not self._progress_failed:
            try:
                self.progress(state.done, state.total)
            except Exception:
                self._progress_failed = True
                logger.exception("progress callback failed; no further progress reports")

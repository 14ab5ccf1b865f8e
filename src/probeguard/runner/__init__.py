"""The runner: executes cases against a pipeline (concurrency, timeouts, retries, cache,
resume, streamed log). It is the only code that calls a pipeline."""

from probeguard.runner.cache import ResponseCache
from probeguard.runner.executor import Runner, RunnerConfig, RunResult, case_error
from probeguard.runner.retry import RetryPolicy, is_transient

__all__ = [
    "ResponseCache",
    "RetryPolicy",
    "RunResult",
    "Runner",
    "RunnerConfig",
    "case_error",
    "is_transient",
]

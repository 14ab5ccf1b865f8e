"""Retry policy: which failures are worth another try, and how long to wait first.

Delay before retry ``i`` (0-based: ``i = 0`` is the wait after the first failed attempt)::

    delay_i = min(max_s, base_s * 2**i * (1 + jitter * u_i)),   u_i ~ Uniform[0, 1)

(capped exponential backoff; AWS Architecture Blog, "Exponential Backoff and Jitter", 2015).
``u_i`` is drawn from ``numpy.random.default_rng([seed, key_hash, i])``, so the jitter is
deterministic for a given call (``key``) and attempt, whatever order concurrent calls finish
in; ``jitter=0`` (the default) means no jitter. When the error carries a server hint
(``PipelineCallError.retry_after``, from HTTP 429/503 ``Retry-After``) the hint is honoured
instead: ``delay_i = min(max_s, retry_after)``.

Transient (retried): ``TimeoutError`` (``asyncio.TimeoutError`` is the same class since
Python 3.11), the built-in ``ConnectionError`` family, aiohttp's ``ClientConnectionError``
family (refused, reset, disconnected, socket timeouts; not TLS certificate errors) and
``PipelineCallError`` with ``transient=True``. Everything else fails the case at once.
"""

from __future__ import annotations

import sys

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from probeguard.core.errors import PipelineCallError
from probeguard.core.hashing import sha256_hex


class RetryPolicy(BaseModel):
    """How often and how patiently to retry transient failures."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    retries: int = Field(default=3, ge=0)
    """Retries after the first attempt (a case makes at most ``retries + 1`` calls)."""
    base_s: float = Field(default=0.5, ge=0.0)
    """Delay before the first retry, doubled for each further one."""
    max_s: float = Field(default=30.0, ge=0.0)
    """Upper bound on any single delay, ``Retry-After`` hints included."""
    jitter: float = Field(default=0.0, ge=0.0, le=1.0)
    """Relative jitter: the backoff is stretched by a factor in ``[1, 1 + jitter)``."""
    seed: int = 0
    """Seed of the jitter draws (with the call key and the attempt number)."""

    def delay(self, attempt: int, error: BaseException | None = None, *, key: str = "") -> float:
        """Seconds to wait after failed attempt ``attempt`` (0-based) of the call ``key``."""
        if attempt < 0:
            raise ValueError(f"attempt must be >= 0, got {attempt}")
        hint = getattr(error, "retry_after", None) if error is not None else None
        if hint is not None:
            return float(min(self.max_s, max(0.0, float(hint))))
        backoff = self.base_s * (2.0 ** min(attempt, 64))
        if self.jitter > 0.0:
            key_hash = int(sha256_hex(key)[:16], 16)
            u = np.random.default_rng([self.seed, key_hash, attempt]).random()
            backoff *= 1.0 + self.jitter * float(u)
        return float(min(self.max_s, backoff))

    def should_retry(self, attempt: int, error: BaseException) -> bool:
        """Whether failed attempt ``attempt`` (0-based) earns another try."""
        return attempt < self.retries and is_transient(error)


def is_transient(error: BaseException) -> bool:
    """Whether ``error`` is a failure that may go away on its own (see the module docstring)."""
    if isinstance(error, PipelineCallError):
        return error.transient
    if isinstance(error, (TimeoutError, ConnectionError)):
        return True
    aiohttp = sys.modules.get("aiohttp")  # an aiohttp error implies aiohttp is imported
    if aiohttp is not None and isinstance(error, aiohttp.ClientConnectionError):
        return not isinstance(error, aiohttp.ClientSSLError)  # a bad certificate stays bad
    return False

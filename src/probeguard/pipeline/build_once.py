"""Values built once per key, each key under its own lock (the reference pipeline's indexes).

Rules (``BuildOnce.get``):

1. a built value is read without any lock (one dict lookup; a value is published only once
   its build has finished, so a reader never sees a half-built index);
2. a missing value is built under the lock of *its key*: concurrent requests for that key wait
   for the one build and then share it, while builds of different keys run concurrently and a
   reader of another, built key never waits;
3. a build that raises publishes nothing: the next request builds again.

The guard lock is held only to look up (or make) a key's lock, never during a build. The time
callers spent waiting on another caller's build of the same key is summed in ``wait_s`` (a
diagnostic: with every index prepared before the runner starts it stays 0).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["BuildOnce"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BuildOnce(Generic[K, V]):
    """A map whose values are built on first request, once per key (module docstring)."""

    def __init__(self) -> None:
        self._values: dict[K, V] = {}
        self._locks: dict[K, threading.Lock] = {}
        self._guard = threading.Lock()
        self._wait_s = 0.0

    def get(self, key: K, build: Callable[[], V]) -> V:
        """The value of ``key``, built by ``build()`` if no caller has built it yet."""
        try:
            return self._values[key]
        except KeyError:
            pass
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        if not lock.acquire(blocking=False):
            started = time.perf_counter()
            lock.acquire()
            waited = time.perf_counter() - started
            with self._guard:
                self._wait_s += waited
        try:
            if key in self._values:
                return self._values[key]
            value = build()
            self._values[key] = value
            return value
        finally:
            lock.release()

    def built(self, key: K) -> bool:
        """Whether ``key``'s value has been built."""
        return key in self._values

    def keys(self) -> list[K]:
        """The built keys, in the order their builds finished."""
        return list(self._values)

    @property
    def wait_s(self) -> float:
        """Seconds callers waited on another caller's build of the same key, summed."""
        return self._wait_s

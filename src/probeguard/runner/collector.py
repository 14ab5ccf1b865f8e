"""The cyclic garbage collector while a run is in flight: young collections less often.

A run keeps every finished record (about 13 tracked containers each for an HTTP answer:
the record, its output, the retrieved chunks and their dicts) and makes many short-lived
containers per call (the HTTP client's request and response objects, the record's dump). At
CPython's default generation-0 threshold (700 net container allocations) the collector runs
a young collection every few cases; the kept records survive each one and are promoted, so
generation-1 and full collections keep walking them, and a full collection also walks
everything else alive in the process. Measured with an instant native pipeline (1,280 cases,
concurrency 32, 2 shared cores): the collector took ~45 µs a case at threshold 700 (5 full
collections of ~50 ms in 7 runs) and ~10 µs at 20,000 (no full collection).

``relaxed_young_collections`` raises the generation-0 threshold to ``YOUNG_THRESHOLD`` for
the block and puts the previous thresholds back on exit, unless something else changed them
meanwhile (another run in another thread, or the scan's own ``engine.gcfreeze``): then the
newer setting is left alone. A threshold already at or above ``YOUNG_THRESHOLD`` (a scan
sets the same value), and a threshold of 0 (automatic collection off), are kept as they are.
Reference counting still frees the records' garbage at once; only cyclic garbage waits a
little longer (at most ``YOUNG_THRESHOLD`` allocations). Nothing is frozen: ``gc.freeze``
cannot be undone for one caller only (``gc.unfreeze`` thaws the scan's frozen objects too).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["YOUNG_THRESHOLD", "relaxed_young_collections"]

YOUNG_THRESHOLD = 20_000
"""Generation-0 threshold during a run; the scan's ``engine.gcfreeze`` uses the same value."""


@contextmanager
def relaxed_young_collections(threshold: int = YOUNG_THRESHOLD) -> Iterator[None]:
    """Generation-0 threshold at least ``threshold`` inside the block (module docstring)."""
    before = gc.get_threshold()
    if before[0] == 0 or before[0] >= threshold:
        yield
        return
    during = (threshold, *before[1:])
    gc.set_threshold(*during)
    try:
        yield
    finally:
        if gc.get_threshold() == during:
            gc.set_threshold(*before)

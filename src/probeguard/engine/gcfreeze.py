"""The cyclic garbage collector's seam for a scan: what is alive once the cases are generated
(modules, corpus, cases, pipeline, probes) is frozen, and young collections run less often,
until the scan ends.

CPython's collector walks every tracked container of a generation on each of its
collections; a scan makes millions of short-lived containers (records dumped and parsed,
judges' intermediate lists), so full collections keep walking the same long-lived objects
made before the runner started. ``gc.freeze()`` moves them to the permanent generation,
which no collection walks (Python docs, ``gc.freeze``; the same recipe Instagram used to
cut GC time, 2017). Reference counting still frees them as before; only cyclic garbage
among them waits until ``gc.unfreeze()`` at the end of the scan puts everything back in the
oldest generation, so a process that runs many scans collects them as usual. Measured on a
cached demo re-run: ~21% less CPU time, the same peak RSS, the same bytes.

Young collections: CPython collects generation 0 every ``threshold0`` (700) net container
allocations. Nearly all of a scan's containers die by reference count within a record's
handling, so most of those collections find nothing; at ``YOUNG_THRESHOLD`` (20,000) a cached
demo re-run takes another ~20% less CPU (4.9 → 3.8 s and 4.4 → 3.4 s user, alternating runs),
the same peak RSS. The thresholds in force before the scan are restored when it ends.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from probeguard.runner.collector import YOUNG_THRESHOLD

__all__ = ["YOUNG_THRESHOLD", "freeze_survivors", "frozen_until_done"]


def freeze_survivors() -> None:
    """Freeze what is alive now (after a collection, so no garbage is frozen with it) and
    raise the generation-0 threshold to ``YOUNG_THRESHOLD``."""
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, older, oldest)


@contextmanager
def frozen_until_done() -> Iterator[None]:
    """On exit, unfreeze whatever ``freeze_survivors`` froze inside the block and restore the
    collector's thresholds (a no-op when it was not called)."""
    thresholds = gc.get_threshold()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)

"""The C allocator's seam for a scan: at most ``ARENAS`` glibc malloc arenas.

glibc gives each thread that contends for the heap its own arena (up to 8 per core), and
memory freed in an arena stays mapped in it for that arena's next allocations. A scan runs
the runner's and onnxruntime's threads over short-lived buffers (tokenizer output,
activations, parsed records), so each arena keeps its own high-water mark and the process's
RSS is their sum. Capping the arenas (glibc ``mallopt(M_ARENA_MAX)``, the setting behind the
``MALLOC_ARENA_MAX`` environment variable; glibc manual, "Memory Allocation Tunables") makes
the threads share the freed memory: the demo scan's peak RSS fell from ~556 to ~457 MiB at
one arena. The setting is process-wide and only limits arenas made after it, so it is made
before the scan starts any thread. A user's own ``MALLOC_ARENA_MAX`` wins (nothing is
changed); on a C library without ``mallopt`` (macOS, musl) this is a no-op.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

__all__ = ["ARENAS", "M_ARENA_MAX", "limit_malloc_arenas"]

ARENAS = 1
"""Arenas a scan allows (one: the measured minimum peak)."""

M_ARENA_MAX = -8
"""glibc's ``mallopt`` parameter number for the arena cap (``malloc.h``)."""


def limit_malloc_arenas(arenas: int = ARENAS) -> bool:
    """Cap glibc's malloc arenas at ``arenas`` unless ``MALLOC_ARENA_MAX`` is set; True when
    the cap was set."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    name = ctypes.util.find_library("c")
    try:
        mallopt = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError, TypeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_ARENA_MAX, arenas))

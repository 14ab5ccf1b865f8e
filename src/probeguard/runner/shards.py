"""Sharding cases into batches and merging the batches' results back (the Ray backend's
pure part: no Ray here, so it is tested without it).

Rules:

- **Shard** (``shard``): cases are taken in case-id order; cases that share a call key form
  one group that never splits (so the in-flight de-duplication of ``runner.executor`` still
  makes one call per key, and the same case is the one that calls, as in a local run);
  groups fill batches of ``batch_size`` cases in the order of their smallest case id, a
  group that does not fit starting a new batch (a group larger than ``batch_size`` is a
  batch of its own). Inside a batch the cases keep their input order. The batches depend
  only on the case ids, the call keys and ``batch_size`` — never on arrival or timing.
- **Merge** (``merge_records``): records are placed by case id back into the input order,
  so the merged list is the one a local ``Runner`` returns for the same cases.
- **Stats** (``merge_stats``): counters are summed over batches; ``cases`` is the number of
  cases and ``wall_s`` the driver's wall time.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from probeguard.core.cases import Case
from probeguard.core.records import CaseError, CaseRecord, RunStats

__all__ = ["failed_batch", "merge_records", "merge_stats", "shard"]

_COUNTERS = ("calls", "cache_hits", "resumed", "retries", "errors")


def shard(cases: Sequence[Case], keys: Sequence[str], batch_size: int) -> list[list[int]]:
    """Input indices of ``cases``, cut into batches as the module docstring says.
    ``keys[i]`` is the call key of ``cases[i]``."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if len(keys) != len(cases):
        raise ValueError(f"{len(keys)} call keys for {len(cases)} cases")
    groups: dict[str, list[int]] = {}
    for i in sorted(range(len(cases)), key=lambda i: cases[i].id):
        groups.setdefault(keys[i], []).append(i)
    batches: list[list[int]] = []
    current: list[int] = []
    for group in groups.values():  # dicts keep insertion order: smallest case id first
        if current and len(current) + len(group) > batch_size:
            batches.append(current)
            current = []
        current.extend(group)
    if current:
        batches.append(current)
    return [sorted(batch) for batch in batches]


def merge_records(
    cases: Sequence[Case], batches: Iterable[Sequence[CaseRecord]]
) -> list[CaseRecord]:
    """The batches' records in the input order of ``cases`` (matched by case id).
    Raises ``ValueError`` when a case has no record or a record no case."""
    by_id: dict[str, CaseRecord] = {}
    for batch in batches:
        for record in batch:
            by_id[record.case.id] = record
    missing = [c.id for c in cases if c.id not in by_id]
    extra = sorted(set(by_id) - {c.id for c in cases})
    if missing or extra:
        raise ValueError(
            f"records do not match the cases: missing {missing[:5]}, extra {extra[:5]}"
        )
    return [by_id[c.id] for c in cases]


def merge_stats(parts: Iterable[RunStats], *, cases: int, wall_s: float) -> RunStats:
    """One ``RunStats`` for the run: the batches' counters summed."""
    totals = dict.fromkeys(_COUNTERS, 0)
    for part in parts:
        for name in _COUNTERS:
            totals[name] += getattr(part, name)
    return RunStats(cases=cases, wall_s=wall_s, **totals)


def failed_batch(cases: Sequence[Case], keys: Sequence[str], error: CaseError) -> list[CaseRecord]:
    """A record per case of a batch that never came back (its worker died or timed out)."""
    return [CaseRecord(case=c, call_key=k, error=error) for c, k in zip(cases, keys, strict=True)]

"""Sharding cases into batches and merging them back (the Ray backend's pure part)."""

from __future__ import annotations

import numpy as np
import pytest

from probeguard.core.cases import Case
from probeguard.core.records import CaseError, CaseRecord, RunStats
from probeguard.runner.shards import failed_batch, merge_records, merge_stats, shard


def _cases(n: int, *, same: dict[int, int] | None = None) -> list[Case]:
    """``n`` cases ``c000``.. with distinct questions, except ``same[i] = j``: case i asks
    case j's question (so both share a call key)."""
    same = same or {}
    return [Case(id=f"c{i:03d}", question=f"question {same.get(i, i)}") for i in range(n)]


def _ids(cases: list[Case], batches: list[list[int]]) -> list[list[str]]:
    return [[cases[i].id for i in batch] for batch in batches]


def test_batches_follow_case_id_order_not_arrival() -> None:
    cases = _cases(10)
    order = np.random.default_rng(7).permutation(10)
    shuffled = [cases[i] for i in order]
    first = _ids(cases, shard(cases, [c.call_key("fp") for c in cases], 3))
    second = _ids(shuffled, shard(shuffled, [c.call_key("fp") for c in shuffled], 3))
    assert [sorted(b) for b in first] == [sorted(b) for b in second]
    assert first == [
        ["c000", "c001", "c002"],
        ["c003", "c004", "c005"],
        ["c006", "c007", "c008"],
        ["c009"],
    ]


def test_cases_sharing_a_call_key_stay_in_one_batch_in_input_order() -> None:
    cases = _cases(6, same={5: 0, 3: 1})  # c005 asks c000's question, c003 asks c001's
    keys = [c.call_key("fp") for c in cases]
    batches = _ids(cases, shard(cases, keys, 2))
    assert ["c000", "c005"] in batches and ["c001", "c003"] in batches
    assert sorted(i for b in batches for i in b) == [c.id for c in cases]


def test_a_group_larger_than_a_batch_is_a_batch_of_its_own() -> None:
    cases = _cases(5, same={1: 0, 2: 0, 3: 0})
    batches = _ids(cases, shard(cases, [c.call_key("fp") for c in cases], 2))
    assert batches == [["c000", "c001", "c002", "c003"], ["c004"]]


def test_shard_refuses_a_bad_batch_size_and_mismatched_keys() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        shard(_cases(2), ["a", "b"], 0)
    with pytest.raises(ValueError, match="call keys"):
        shard(_cases(2), ["a"], 1)


def _record(case: Case, *, error: bool = False) -> CaseRecord:
    err = CaseError(type="RuntimeError", message="x") if error else None
    return CaseRecord(case=case, call_key=case.call_key("fp"), error=err)


def test_merge_puts_records_back_in_input_order_whatever_the_batch_order() -> None:
    cases = _cases(7)[::-1]  # input order is not id order
    batches = shard(cases, [c.call_key("fp") for c in cases], 3)
    parts = [[_record(cases[i]) for i in batch] for batch in reversed(batches)]
    merged = merge_records(cases, parts)
    assert [r.case.id for r in merged] == [c.id for c in cases]


def test_merge_refuses_missing_or_unknown_records() -> None:
    cases = _cases(3)
    with pytest.raises(ValueError, match="missing"):
        merge_records(cases, [[_record(cases[0])]])
    with pytest.raises(ValueError, match="extra"):
        merge_records(cases[:1], [[_record(c) for c in cases]])


def test_stats_are_summed_over_batches() -> None:
    parts = [RunStats(cases=2, calls=2, cache_hits=1, retries=1), RunStats(calls=3, errors=2)]
    stats = merge_stats(parts, cases=9, wall_s=1.5)
    assert (stats.cases, stats.calls, stats.cache_hits, stats.retries, stats.errors) == (
        9,
        5,
        1,
        1,
        2,
    )
    assert stats.wall_s == 1.5


def test_a_failed_batch_is_one_error_record_per_case() -> None:
    cases = _cases(2)
    error = CaseError(type="RayActorError", message="worker died", transient=True)
    records = failed_batch(cases, [c.call_key("fp") for c in cases], error)
    assert [r.case.id for r in records] == ["c000", "c001"]
    assert all(r.error == error and r.output is None for r in records)

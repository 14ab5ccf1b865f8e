"""Young garbage collections are relaxed while a run is in flight, and put back after
(``runner.collector``, issue 18)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from probeguard.core.cases import Case
from probeguard.core.pipeline import PipelineOutput, Variation
from probeguard.runner import Runner
from probeguard.runner.collector import YOUNG_THRESHOLD, relaxed_young_collections


@pytest.fixture
def default_thresholds() -> Iterator[tuple[int, int, int]]:
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        yield (700, 10, 10)
    finally:
        gc.set_threshold(*before)


class ThresholdSeen:
    """A native pipeline that records the collector's thresholds during each call."""

    name = "threshold-seen"
    capabilities: frozenset[object] = frozenset()

    def __init__(self) -> None:
        self.seen: list[tuple[int, int, int]] = []

    def fingerprint(self) -> str:
        return "threshold-seen"

    async def aanswer(self, question: str, variation: Variation | None = None) -> PipelineOutput:
        self.seen.append(gc.get_threshold())
        return PipelineOutput(answer=question)


def test_a_run_relaxes_young_collections_and_restores_them(
    default_thresholds: tuple[int, int, int],
) -> None:
    pipeline = ThresholdSeen()
    Runner(pipeline).run([Case(id=f"c{i}", question=f"q{i}") for i in range(3)])
    assert pipeline.seen == [(YOUNG_THRESHOLD, 10, 10)] * 3
    assert gc.get_threshold() == default_thresholds


def test_thresholds_come_back_after_a_failing_block(
    default_thresholds: tuple[int, int, int],
) -> None:
    with pytest.raises(RuntimeError), relaxed_young_collections():
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
        raise RuntimeError("boom")
    assert gc.get_threshold() == default_thresholds


@pytest.mark.parametrize("kept", [(0, 10, 10), (50_000, 10, 10)])
def test_off_or_higher_thresholds_are_kept(kept: tuple[int, int, int]) -> None:
    before = gc.get_threshold()
    gc.set_threshold(*kept)
    try:
        with relaxed_young_collections():
            assert gc.get_threshold() == kept
        assert gc.get_threshold() == kept
    finally:
        gc.set_threshold(*before)


def test_a_setting_changed_inside_the_block_is_left_alone(
    default_thresholds: tuple[int, int, int],
) -> None:
    with relaxed_young_collections():
        gc.set_threshold(1234, 5, 5)  # e.g. another run in another thread finished first
    assert gc.get_threshold() == (1234, 5, 5)

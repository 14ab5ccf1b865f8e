"""The Ray backend without Ray: settings, the missing extra, the runner's gate hook and the
cluster-wide slot logic (``_Slots`` is plain asyncio; Ray only hosts it)."""

from __future__ import annotations

import asyncio
import importlib
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from probeguard.config.loading import load_config
from probeguard.config.models import ScanConfig
from probeguard.core.cases import Case
from probeguard.core.errors import InputError, MissingExtraError
from probeguard.core.pipeline import PipelineOutput, Variation
from probeguard.engine.scan import scan
from probeguard.runner import Runner, RunnerConfig
from probeguard.runner.ray_backend import RayRunner, _Slots, import_ray
from probeguard.runner.settings import RaySettings, RunnerSettings


def test_backend_defaults_to_local_and_ray_settings_are_validated() -> None:
    settings = RunnerSettings()
    assert settings.backend == "local" and settings.ray.address is None
    ray = RunnerSettings(backend="ray", ray={"workers": 3, "batch_size": 8, "num_cpus": 2})
    assert (ray.ray.workers, ray.ray.batch_size, ray.ray.num_cpus) == (3, 8, 2)
    for bad in (
        {"backend": "dask"},
        {"ray": {"workers": 0}},
        {"ray": {"batch_size": 0}},
        {"ray": {"cluster_concurrency": 0}},
        {"ray": {"cluster_rate_per_s": 0}},
        {"ray": {"address": "host :6379"}},
        {"ray": {"address": ""}},
        {"ray": {"unknown": 1}},
    ):
        with pytest.raises(ValidationError):
            RunnerSettings.model_validate(bad)


def test_backend_can_be_chosen_from_the_environment() -> None:
    env = {"PROBEGUARD_RUNNER__BACKEND": "ray", "PROBEGUARD_RUNNER__RAY__ADDRESS": "auto"}
    config = load_config(None, environ=env)
    assert config.runner.backend == "ray" and config.runner.ray == RaySettings(address="auto")


def test_the_readmes_ray_settings_are_a_valid_config() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    block = next(
        b for b in readme.split("```yaml\n")[1:] if b.startswith("runner:\n  backend: ray")
    )
    config = ScanConfig.model_validate(yaml.safe_load(block.split("```")[0]))
    assert config.runner.backend == "ray" and config.runner.ray.cluster_concurrency == 16


def test_missing_ray_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.import_module

    def without_ray(name: str, *args: object) -> object:
        if name == "ray":
            raise ImportError("No module named 'ray'")
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", without_ray)
    with pytest.raises(MissingExtraError, match=r'pip install "probeguard\[ray\]"') as info:
        import_ray()
    assert info.value.extra == "ray"
    runner = RayRunner(lambda: None, "fp", RunnerConfig(), RaySettings())  # type: ignore[arg-type,return-value]
    with pytest.raises(MissingExtraError):
        runner.run([Case(id="a", question="q")])


def _ray_demo_config() -> ScanConfig:
    return ScanConfig(
        demo=True,
        runner={"backend": "ray", "cache_dir": None},
        pipeline={"reference": {"embedder": {"name": "hashing", "dim": 64}}},
        probes={"enabled": ["benign_control"]},
    )


def test_a_pipeline_object_cannot_be_sent_to_ray(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="pipeline object") as info:
        scan(_ray_demo_config(), tmp_path / "out", pipeline=_Echo())  # type: ignore[arg-type]
    assert info.value.field == "runner.backend"
    assert not (tmp_path / "out").exists()  # refused before anything was written


def test_a_scan_without_ray_stops_before_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.import_module
    monkeypatch.setattr(
        importlib,
        "import_module",
        lambda name, *a: _raise(ImportError(name)) if name == "ray" else real(name, *a),
    )
    with pytest.raises(MissingExtraError, match=r"probeguard\[ray\]"):
        scan(_ray_demo_config(), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def _raise(exc: Exception) -> None:
    raise exc


class _Echo:
    name = "echo"
    capabilities = frozenset()

    def __init__(self) -> None:
        self.calls = 0

    def fingerprint(self) -> str:
        return "echo-1"

    async def aanswer(self, question: str, variation: Variation | None = None) -> PipelineOutput:
        self.calls += 1
        await asyncio.sleep(0.01)
        return PipelineOutput(answer=question)


def test_the_runner_holds_the_gate_per_call_and_its_wait_is_not_timed() -> None:
    entered: list[str] = []

    @asynccontextmanager
    async def gate():  # type: ignore[no-untyped-def]
        await asyncio.sleep(0.3)  # longer than timeout_s: waiting for a slot is not the call
        entered.append("in")
        yield

    pipeline = _Echo()
    config = RunnerConfig(concurrency=2, timeout_s=0.2)
    result = Runner(pipeline, config, gate=gate).run(
        [Case(id=f"c{i}", question=f"q{i}") for i in range(3)]
    )
    assert [r.error for r in result.records] == [None, None, None]
    assert len(entered) == pipeline.calls == result.stats.calls == 3


def test_slots_never_grant_more_than_the_limit_and_serve_in_request_order() -> None:
    async def main() -> tuple[list[str], int]:
        slots = _Slots(2)
        order: list[str] = []

        async def use(lease: str) -> None:
            await slots.acquire(lease)
            order.append(lease)
            await asyncio.sleep(0.01)
            await slots.release(lease)

        await asyncio.gather(*(use(f"l{i}") for i in range(6)))
        held, peak = await slots.usage()
        assert held == 0
        return order, peak

    order, peak = asyncio.run(main())
    assert peak == 2 and order == [f"l{i}" for i in range(6)]


def test_a_released_waiting_lease_never_takes_a_slot() -> None:
    async def main() -> tuple[bool, tuple[int, int]]:
        slots = _Slots(1)
        await slots.acquire("a")
        waiting = asyncio.ensure_future(slots.acquire("b"))
        await asyncio.sleep(0)
        await slots.release("b")  # its caller gave up while waiting
        await slots.release("early")  # a release that overtook its acquire ...
        late = await slots.acquire("early")  # ... makes that acquire return without a slot
        await slots.release("a")
        await asyncio.gather(waiting, return_exceptions=True)
        assert waiting.cancelled()
        return late, await slots.usage()

    late, (held, peak) = asyncio.run(main())
    assert late is False and held == 0 and peak == 1


def test_a_rate_spaces_call_starts_across_callers() -> None:
    """Three calls at once with 2 calls/s: the second waits 0.5 s, the third 1 s (a fake
    clock and sleep record the waits)."""
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    async def main() -> None:
        slots = _Slots(None, 2.0, clock=lambda: 100.0, sleep=sleep)
        assert await asyncio.gather(*(slots.acquire(f"l{i}") for i in range(3))) == [True] * 3

    asyncio.run(main())
    assert waits == [0.5, 1.0]

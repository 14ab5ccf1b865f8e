"""The engine's stages: each returns a value and changes none of its inputs (the score stage
returns copies carrying the verdicts), and one function builds the runner from the config."""

from __future__ import annotations

from probeguard.config.models import ScanConfig
from probeguard.core.documents import Document
from probeguard.engine.stages import (
    assemble,
    attribute_failures,
    build_runner,
    execute,
    generate,
    score,
)
from probeguard.metrics.golden import GoldenVerdict
from probeguard.runner.settings import RunnerSettings
from testkit import abstain, golden, reference_pipeline

DOCS = [
    Document(id="refunds", title="Refunds", text="Items can be returned within 30 days."),
    Document(id="leave", title="Leave", text="Staff get 25 days of annual leave."),
]
QUESTIONS = [
    golden("q1", "How long is the return window?", "30 days", "refunds"),
    golden("q2", "How much annual leave do staff get?", "25 days", "leave"),
    abstain("q3", "Who is the CEO of the moon?"),
]


def test_stages_return_values_and_never_write_into_records():
    config = ScanConfig(
        probes={"enabled": ["unanswerable"]},
        runner={"cache_dir": None},
        attribution={"enabled": False},
    )
    generated = generate(config, pipeline=reference_pipeline(DOCS), inputs=(DOCS, QUESTIONS))
    assert [c.id for c in generated.golden] == ["q1", "q2", "q3"]
    assert generated.cases[:3] == list(generated.golden) and len(generated.cases) > 3
    executed = execute(build_runner(config.runner, generated.pipeline), generated.cases)
    scored = score(config, generated, executed)
    assert all(r.verdict == {} for r in executed.records)
    assert len(scored.records) == len(executed.records)
    assert all(s is not e for s, e in zip(scored.records, executed.records))
    assert all(r.verdict for r in scored.records)
    by_id = {r.case.id: v for r, v in scored.golden}
    assert isinstance(by_id["q1"], GoldenVerdict) and by_id["q3"] is not None
    saved = scored.records[0].verdict
    assert (by_id["q1"].passed, by_id["q1"].hit) == (saved["passed"], saved["hit"])
    assert "contains" not in scored.records[2].verdict  # an abstention case
    probe_records = [r for r in scored.records if r.case.probe == "unanswerable"]
    assert probe_records and all("group_failed" in r.verdict for r in probe_records)
    assert scored.summary.golden is not None and scored.summary.golden.cases == 3
    attributed = attribute_failures(config, generated, executed, scored)
    assert attributed.entries == () and attributed.summary is None
    run = assemble(config, generated, executed, scored, attributed, wall_s=1.5)
    assert run.stats.wall_s == 1.5 and run.stats is not executed.stats
    assert run.summary.attribution is None and "attribution" not in run.summary
    assert run.pipeline_fingerprint == generated.header.pipeline_fingerprint


def test_build_runner_follows_the_runner_settings(tmp_path):
    pipeline = reference_pipeline(DOCS)
    settings = RunnerSettings(concurrency=3, timeout_s=5, retries=1, cache_dir=tmp_path)
    runner = build_runner(settings, pipeline)
    assert (runner.config.concurrency, runner.config.timeout_s) == (3, 5)
    assert runner.config.retry.retries == 1
    assert runner.cache is not None and runner.cache.directory == tmp_path
    assert build_runner(RunnerSettings(cache_dir=None), pipeline).cache is None

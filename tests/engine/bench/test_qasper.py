"""``probeguard bench qasper`` end to end on a small slice of the real sample (skipped when the
data is absent), the skip message, the plots' determinism and the missing-extra path."""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner

from probeguard.cli.main import cli
from probeguard.core.artifacts import artifact_json
from probeguard.engine.bench import qasper
from probeguard.engine.bench.qasper_data import DATA_FILE, load_qasper
from probeguard.results import ARTIFACTS, QasperBench


@pytest.fixture(scope="module")
def data_file(shared_data):
    path = shared_data / DATA_FILE
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return path


@pytest.fixture(scope="module")
def slice_result(data_file) -> QasperBench:
    """Three questions, two chunk sizes: every experiment, few calls."""
    return qasper.run_qasper(data_file, limit=3, chunk_sizes=(256, 512), resamples=100)


def test_the_sample_has_43_usable_questions_one_with_unlocated_evidence(data_file):
    data = load_qasper(data_file)
    assert (len(data.papers), len(data.questions)) == (10, 51)
    usable = [q for q in data.questions if q.usable]
    assert len(usable) == 43
    assert sum(None in q.evidence_pids for q in usable) == 1


def test_small_slice_runs_every_experiment(slice_result, data_file):
    b = slice_result
    assert b.usable == 43 and b.settings.limit == 3
    assert [(r.run, r.cases) for r in b.runs] == [
        ("chunks-256", 3),
        ("chunks-512", 3),
        ("distraction", 6),
    ]
    assert {r.experiment for r in b.conditions} == {
        "boundary",
        "distraction",
        "spread",
        "chunk_size",
    }
    sizes = [r.condition for r in b.conditions if r.experiment == "chunk_size"]
    assert sizes == ["256", "512"]
    for row in b.conditions:
        assert row.questions >= 1
        assert row.scored <= row.questions
    # the gold-only pool holds nothing but evidence: every chunk it returns covers one
    evidence = {q.id: len(q.evidence) for q in load_qasper(data_file).questions}
    gold = [r for r in b.records if r.conditions.get("distraction") == "gold_only"]
    assert len(gold) == 3
    assert all(r.ecs * evidence[r.question_id] == pytest.approx(r.contexts) for r in gold)
    assert all(r.error is None for r in b.records)


def test_plots_and_json_are_byte_identical_across_runs(slice_result, data_file, tmp_path):
    pytest.importorskip("matplotlib")
    first = qasper.write_qasper(slice_result, tmp_path / "a")
    again = qasper.run_qasper(data_file, limit=3, chunk_sizes=(256, 512), resamples=100)
    qasper.write_qasper(again, tmp_path / "b")
    assert first.plots == [
        "ecs_by_condition.png",
        "ecs_by_condition.svg",
        "f1_vs_ecs.png",
        "f1_vs_ecs.svg",
    ]
    for name in [*first.plots, "bench.json", "bench.md", "bench.html"]:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    svg = (tmp_path / "a" / "ecs_by_condition.svg").read_text(encoding="utf-8")
    assert "<dc:date>" not in svg
    saved = QasperBench.model_validate(json.loads((tmp_path / "a" / "bench.json").read_text()))
    assert artifact_json(saved) == artifact_json(first)


def test_without_matplotlib_the_bench_still_writes_json_and_md(slice_result, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails
    saved = qasper.write_qasper(slice_result, tmp_path)
    assert saved.plots == []
    assert 'pip install "probeguard[plots]"' in (saved.plots_note or "")
    assert (tmp_path / "bench.json").is_file()
    assert "probeguard[plots]" in (tmp_path / "bench.md").read_text(encoding="utf-8")
    assert not list(tmp_path.glob("*.svg"))
    page = (tmp_path / "bench.html").read_text(encoding="utf-8")  # drawn without matplotlib
    assert '<section id="qasper-ecs" class="plot">' in page and 'id="qasper-token-f1"' in page


def test_missing_data_skips_with_a_clear_message(tmp_path):
    missing = tmp_path / "nowhere.jsonl"
    result = CliRunner().invoke(cli, ["bench", "qasper", "--data", str(missing)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("skipped: QASPER data not found at")
    assert str(missing) in result.output


def test_cli_writes_table_json_and_rejects_bad_input(data_file, tmp_path):
    out = tmp_path / "out"
    args = ["bench", "qasper", "--data", str(data_file), "--limit", "1", "--no-plots"]
    result = CliRunner().invoke(
        cli, [*args, "--chunk-sizes", "512", "--no-progress", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "| extractive | chunk size | 512 |" in result.output
    data = json.loads((out / "bench.json").read_text(encoding="utf-8"))
    assert data["kind"] == "bench-qasper" and data["plots"] == []
    bad = CliRunner().invoke(cli, [*args, "--generators", "gpt9", "--out", str(out)])
    assert bad.exit_code != 0 and "unknown or no generator" in bad.output


def test_schema_lists_the_qasper_bench():
    assert ARTIFACTS["bench-qasper"] is QasperBench
    result = CliRunner().invoke(cli, ["schema", "bench-qasper"])
    assert result.exit_code == 0 and "QasperCondition" in result.output

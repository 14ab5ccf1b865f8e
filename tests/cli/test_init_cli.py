"""`probeguard init CORPUS`: a commented config that loads, for the user's data."""

from __future__ import annotations

import shutil

from click.testing import CliRunner

from probeguard.cli.main import cli
from probeguard.config import load_config
from probeguard.corpus.loaders import load_corpus
from probeguard.engine.stages import demo_data_dir


def test_init_writes_a_config_that_loads_the_corpus_and_finds_the_questions(tmp_path) -> None:
    data = tmp_path / "data"
    shutil.copytree(demo_data_dir(), data)
    config = tmp_path / "conf" / "probeguard.yaml"
    result = CliRunner().invoke(cli, ["init", str(data / "corpus.jsonl"), "--config", str(config)])
    assert result.exit_code == 0, result.output
    assert "22 documents" in result.output
    text = config.read_text()
    assert "path: ../data/corpus.jsonl" in text and "# pipeline" not in text
    loaded = load_config(config)
    assert loaded.corpus.path == (data / "corpus.jsonl").resolve()
    assert loaded.corpus.questions == (data / "questions.jsonl").resolve()
    assert loaded.corpus.attacks == (data / "attacks.jsonl").resolve()
    assert loaded.pipeline.type == "reference"
    assert len(load_corpus(loaded.corpus.path)) == 22


def test_init_leaves_missing_files_commented_and_never_overwrites(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Alpha\n\nAlpha text.\n")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", "docs"]).exit_code == 0
    loaded = load_config("probeguard.yaml")
    assert loaded.corpus.questions is None and loaded.corpus.attacks is None
    assert "# questions: questions.jsonl" in (tmp_path / "probeguard.yaml").read_text()
    again = runner.invoke(cli, ["init", "docs"])
    assert again.exit_code == 2 and "--force" in again.output
    assert runner.invoke(cli, ["init", "docs", "--force"]).exit_code == 0


def test_init_reports_a_bad_corpus_with_its_line(tmp_path) -> None:
    bad = tmp_path / "corpus.jsonl"
    bad.write_text('{"id": "a", "text": "ok"}\n{"id": "b"}\n')
    result = CliRunner().invoke(cli, ["init", str(bad), "--config", str(tmp_path / "c.yaml")])
    assert result.exit_code == 2 and "line 2" in result.output
    assert not (tmp_path / "c.yaml").exists()

"""``probeguard dataset synth``: two files in the existing formats, byte-identical for a
seed, a summary on stdout, exit 2 naming the file for a bad corpus."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from probeguard.cli.main import cli
from probeguard.corpus.questions import load_questions
from probeguard.dataset.attack_types import load_attack_cases
from probeguard.engine.stages import demo_data_dir


def _synth(out: Path, seed: int = 0) -> str:
    corpus = str(demo_data_dir() / "corpus.jsonl")
    args = ["dataset", "synth", corpus, "--n", "48", "--seed", str(seed), "--out", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return result.output


def test_synth_writes_golden_and_attack_files_deterministically(tmp_path: Path) -> None:
    output = _synth(tmp_path / "a.jsonl")
    _synth(tmp_path / "b.jsonl")
    assert "synthesized 48 cases" in output and "near duplicates dropped" in output
    for suffix in (".jsonl", ".attacks.jsonl"):
        assert (tmp_path / f"a{suffix}").read_bytes() == (tmp_path / f"b{suffix}").read_bytes()
    golden = load_questions(tmp_path / "a.jsonl")
    attacks = load_attack_cases(tmp_path / "a.attacks.jsonl")
    assert len(golden) + len(attacks) == 48


def test_synth_bad_corpus_exits_2_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "corpus.jsonl"
    bad.write_text('{"id": "a"}\n')
    result = CliRunner().invoke(
        cli, ["dataset", "synth", str(bad), "--out", str(tmp_path / "o.jsonl")]
    )
    assert result.exit_code == 2
    assert "corpus.jsonl" in result.output

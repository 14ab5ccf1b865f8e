"""`probeguard sweep`: one run per backend and the comparison, from a config file; bad
backends are a clear error naming the option."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from probeguard.cli.main import cli

CONFIG = """\
demo: true
runner: {cache_dir: null}
probes: {enabled: [retrieval_gap]}
pipeline:
  reference:
    embedder: {name: hashing, dim: 1024}
"""


def test_sweep_writes_one_run_per_backend_and_the_comparison(tmp_path: Path) -> None:
    config = tmp_path / "scan.yaml"
    config.write_text(CONFIG)
    out = tmp_path / "backends"
    result = CliRunner().invoke(
        cli,
        [
            "sweep",
            "--config",
            str(config),
            "--backends",
            "bm25,hybrid",
            "--min-score",
            "0.5",
            "--out",
            str(out),
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    assert (out / "bm25" / "run.json").is_file() and (out / "hybrid" / "report.md").is_file()
    md = (out / "comparison.md").read_text()
    assert "# ProbeGuard backend comparison" in md and "Gate: min_score 0.5" in md
    assert "| metric | bm25 | hybrid |" in md
    assert str(out / "comparison.md") in result.output
    page = (out / "comparison.html").read_text()
    assert '<section id="backends" class="plot">' in page
    assert '<section id="gate-bm25" class="plot">' in page and "configured gate 0.5" in page


def test_unknown_backend_is_a_clear_error(tmp_path: Path) -> None:
    config = tmp_path / "scan.yaml"
    config.write_text(CONFIG)
    result = CliRunner().invoke(
        cli, ["sweep", "--config", str(config), "--backends", "faiss", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert "backends must be among dense, bm25, hybrid" in result.output

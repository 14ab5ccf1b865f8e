"""The README's Python examples and the package docstring's example run as written, offline,
in a temporary folder holding the README's ``probeguard.yaml``."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

import probeguard
from probeguard.config import load_config
from probeguard.corpus.loaders import load_corpus
from probeguard.corpus.questions import load_questions
from probeguard.dataset.attack_types import load_attack_cases
from probeguard.dataset.eval_records import load_eval_records

README = Path(__file__).parents[2] / "README.md"
FENCE = re.compile(r"^```(\w+)(?:[ \t]+([\w.-]+))?\n(.*?)^```$", re.MULTILINE | re.DOTALL)
"""A fenced block: its language, an optional file name after it (```jsonl corpus.jsonl), and
its body."""


def blocks(lang: str) -> list[str]:
    return [body for kind, _, body in FENCE.findall(README.read_text()) if kind == lang]


def data_files(folder: Path) -> dict[str, Path]:
    """The README's named data blocks, written into ``folder``."""
    out = {}
    for _, name, body in FENCE.findall(README.read_text()):
        if name:
            out[name] = folder / name
            out[name].write_text(body, encoding="utf-8")
    return out


def write_config_files(folder: Path) -> None:
    """Each YAML block whose first line is ``# NAME.yaml`` becomes that file."""
    for body in blocks("yaml"):
        first = body.splitlines()[0]
        if re.fullmatch(r"# [\w.-]+\.ya?ml", first):
            (folder / first[2:]).write_text(body)


def docstring_example() -> str:
    """The indented code of ``probeguard.__doc__``."""
    doc = probeguard.__doc__ or ""
    code = [line for line in doc.splitlines() if line.startswith("    ")]
    return textwrap.dedent("\n".join(code))


def test_the_public_api_gives_the_functions() -> None:
    from probeguard import load_config, scan

    assert callable(scan) and callable(load_config)
    assert scan.__module__ == "probeguard.engine.scan"
    assert load_config.__module__ == "probeguard.config.loading"


def test_the_readme_has_python_examples() -> None:
    assert len(blocks("python")) >= 3
    assert "scan(load_config" in docstring_example()


@pytest.mark.slow  # several small demo scans
@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_readme_python_block_runs(index, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_config_files(tmp_path)
    exec(compile(blocks("python")[index], f"README.md python block {index}", "exec"), {})


@pytest.mark.slow  # a small demo scan
def test_package_docstring_example_runs(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_config_files(tmp_path)
    exec(compile(docstring_example(), "probeguard.__doc__", "exec"), {})
    assert (tmp_path / "runs" / "mine" / "report.md").is_file()


def test_your_data_examples_load_as_written(tmp_path) -> None:
    files = data_files(tmp_path)
    assert set(files) == {
        "corpus.jsonl",
        "corpus.csv",
        "questions.jsonl",
        "attacks.jsonl",
        "eval.csv",
    }
    docs = load_corpus(files["corpus.jsonl"])
    assert docs[1].metadata == {"status": "archived", "effective": "2022-01-01"}
    assert load_corpus(files["corpus.csv"])[0].metadata == {"department": "Care"}
    ids = {d.id for d in docs}
    questions = load_questions(files["questions.jsonl"], corpus_ids=ids)
    assert [q.expected.mode for q in questions] == ["answer", "abstain"]
    attacks = load_attack_cases(files["attacks.jsonl"], corpus_ids=ids)
    assert [a.meta["attack_type"] for a in attacks] == ["temporal_conflict", "false_premise"]
    (record,) = load_eval_records(files["eval.csv"])
    assert record.retrieval_context == (
        "Items may be returned within 30 days of delivery for a full refund.",
    )
    write_config_files(tmp_path)
    config = load_config(tmp_path / "my-scan.yaml")
    assert config.pipeline.type == "callable" and config.corpus.path == files["corpus.jsonl"]

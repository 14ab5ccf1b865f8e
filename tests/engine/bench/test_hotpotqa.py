"""The HotpotQA benchmark: paragraph splitting, the corpus/question build, and a small slice
run end to end through the CLI (extractive generator)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from probeguard.cli.main import cli
from probeguard.core.errors import InputError
from probeguard.dataset.halueval import load_halueval_qa, split_paragraphs
from probeguard.engine.bench.hotpotqa import build_inputs


def test_split_at_the_glued_seam():
    assert split_paragraphs("It was founded in 1859.The town lies on a river.") == (
        "It was founded in 1859.",
        "The town lies on a river.",
    )
    # an abbreviation is not a seam; the real one is
    assert split_paragraphs("He moved to the U.S.A in 1990.Ohio is a state.") == (
        "He moved to the U.S.A in 1990.",
        "Ohio is a state.",
    )
    assert split_paragraphs("No seam here. Just one paragraph.") == (
        "No seam here. Just one paragraph.",
    )


def test_loader_names_line_and_field(tmp_path):
    path = tmp_path / "qa.jsonl"
    path.write_text(
        json.dumps(
            {"knowledge": "a.B", "question": "q", "right_answer": "", "hallucinated_answer": "x"}
        )
        + "\n"
    )
    with pytest.raises(InputError) as info:
        load_halueval_qa(path)
    assert info.value.line == 1 and info.value.field == "right_answer"


@pytest.fixture(scope="module")
def items(shared_data):
    path = shared_data / "halueval" / "qa_one_turn.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return load_halueval_qa(path)


def test_most_rows_split_into_two_paragraphs(items):
    assert len(items) == 500
    assert sum(it.split for it in items) >= 350


def test_inputs_are_deterministic_and_hold_both_gold_paragraphs(items):
    docs, cases = build_inputs(items, n_docs=40, n_queries=10, seed=42)
    again = build_inputs(items, n_docs=40, n_queries=10, seed=42)
    assert [d.model_dump() for d in docs] == [d.model_dump() for d in again[0]]
    assert len(docs) == 40 and len(cases) == 10
    ids = {d.id for d in docs}
    assert len(ids) == 40
    for case in cases:
        assert (
            set(case.expected.evidence_doc_ids) <= ids and len(case.expected.evidence_doc_ids) == 2
        )
    other, _ = build_inputs(items, n_docs=40, n_queries=10, seed=43)
    assert {d.id for d in other} != ids
    with pytest.raises(InputError, match="at least 2"):
        build_inputs(items, n_docs=10, n_queries=10, seed=42)


@pytest.mark.slow  # a benchmark slice: many calls
def test_small_slice_through_the_cli(items, shared_data, tmp_path):
    data = shared_data / "halueval" / "qa_one_turn.jsonl"
    result = CliRunner().invoke(
        cli,
        [
            "bench",
            "hotpotqa",
            "--data",
            str(data),
            "--n-docs",
            "16",
            "--n-queries",
            "4",
            "--seed",
            "42",
            "--generators",
            "extractive",
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "| extractive |" in result.output
    table = (tmp_path / "bench.md").read_text()
    for column in (
        "FCS",
        "chunk fracture",
        "retrieval gap",
        "corpus contradiction",
        "prompt hijack",
        "context sensitivity",
        "standard-eval failure",
    ):
        assert column in table
    run = json.loads((tmp_path / "extractive" / "run.json").read_text())
    assert set(run["summary"]["probes"]) == {
        "chunk_fracture",
        "retrieval_gap",
        "corpus_contradiction",
        "prompt_hijack",
        "context_sensitivity",
    }


def test_missing_data_skips_with_a_clear_message(tmp_path):
    result = CliRunner().invoke(cli, ["bench", "hotpotqa", "--data", str(tmp_path / "nope.jsonl")])
    assert result.exit_code == 0 and result.output.startswith("skipped: HotpotQA data not found")

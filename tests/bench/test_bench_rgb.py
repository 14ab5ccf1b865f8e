"""``probeguard bench rgb``: the matching rule on hand-made answers, the loader (nested answer
lists, errors naming line and field), a tiny hand-made RGB-format file end to end with the
corpus_contradiction probe (hashing embedder, extractive generator), a real-data slice (slow;
skipped without the data) and the skip message. No RGB text is copied here (CC BY-NC-SA)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from probeguard.cli.main import cli
from probeguard.core.errors import InputError
from probeguard.engine.bench.rgb import run_rgb, summarize, verdict
from probeguard.engine.bench.rgb_data import (
    DATA_FILE,
    build_corpus,
    flatten_answers,
    load_rgb,
)
from probeguard.results import ARTIFACTS, RgbBench
from probeguard.results.bench_qa import RgbOutcome

ROWS = [
    {
        "id": 0,
        "query": "Where was the 2031 Harbour Games final held?",
        "answer": "Port Ellis",
        "fakeanswer": "Gravenholm",
        "positive": ["The 2031 Harbour Games final was held in Port Ellis on 4 May."],
        "positive_wrong": ["The 2031 Harbour Games final was held in Gravenholm on 4 May."],
        "negative": ["The Harbour Games began as a rowing contest between two towns."],
    },
    {
        "id": 1,
        "query": "When did the Lindqvist bridge open?",
        "answer": [["March 3 2029", "3 March 2029"]],
        "fakeanswer": "June 9 2027",
        "positive": ["The Lindqvist bridge opened on 3 March 2029 after six years of work."],
        "positive_wrong": ["The Lindqvist bridge opened on June 9 2027 after six years of work."],
        "negative": ["Bridges in the region are inspected every two years.", "  "],
    },
]


def write_rgb(path, rows=ROWS) -> None:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")


@pytest.mark.parametrize(
    ("answer", "refused", "expected"),
    [
        ("It was held in Port Ellis [1].", False, "true"),
        ("The final took place in gravenholm.", False, "fake"),
        ("Sources disagree: Port Ellis or Gravenholm.", False, "both"),
        ("It was held in Ellisport.", False, "neither"),  # word boundaries: no partial match
        ("Port Ellis", True, "refused"),  # a refusal is a refusal whatever it quotes
    ],
)
def test_verdict_rule(answer, refused, expected):
    assert verdict(answer, refused, ["Port Ellis"], "Gravenholm") == expected


def test_verdict_accepts_any_listed_true_answer():
    answers = flatten_answers([["March 3 2029", "3 March 2029"]])
    assert answers == ("March 3 2029", "3 March 2029")
    assert verdict("It opened on 3 March 2029.", False, answers, "June 9 2027") == "true"


def test_summarize_shares():
    outcomes = [
        RgbOutcome(id=str(i), answer="", verdict=v)
        for i, v in enumerate(["fake", "fake", "true", "refused"])
    ]
    m = summarize(outcomes)
    assert (m.fake.value, m.fake.n, m.fake.method) == (0.5, 4, "wilson")
    assert (m.true.value, m.both.value, m.neither.value, m.refused.value) == (0.25, 0, 0, 0.25)


def test_loader_flattens_and_names_line_and_field(tmp_path):
    path = tmp_path / "en_fact.json"
    write_rgb(path)
    items = load_rgb(path)
    assert [it.id for it in items] == ["0", "1"]
    assert items[1].passages["negative"] == (
        "Bridges in the region are inspected every two years.",
    )
    assert [d.id for d in build_corpus(items, "counterfactual")] == [
        "rgb0-fake0",
        "rgb0-neg0",
        "rgb1-fake0",
        "rgb1-neg0",
    ]
    write_rgb(path, [ROWS[0], {**ROWS[1], "fakeanswer": ""}])
    with pytest.raises(InputError) as info:
        load_rgb(path)
    assert (info.value.line, info.value.field) == (2, "fakeanswer")
    write_rgb(path, [{**ROWS[0], "positive_wrong": "one passage"}])
    with pytest.raises(InputError) as info:
        load_rgb(path)
    assert (info.value.line, info.value.field) == (1, "positive_wrong")


def test_tiny_file_end_to_end_with_the_probe(tmp_path):
    path = tmp_path / "en_fact.json"
    write_rgb(path)
    result = run_rgb(path, tmp_path / "out", generators=["extractive"], embedder="hashing", top_k=2)
    assert [(r.generator, r.condition) for r in result.rows] == [
        ("extractive", "clean"),
        ("extractive", "counterfactual"),
    ]
    clean, fake = result.rows
    # Only the edited passage answers the question in the counterfactual corpus: the
    # extractive generator quotes it, so it repeats the fake answer; the clean corpus does not.
    assert fake.metrics.fake.value > clean.metrics.fake.value
    assert clean.metrics.true.n == 2
    assert len(result.probe) == 1 and result.probe[0].cases > 0
    assert (tmp_path / "out" / "probe-extractive" / "run.json").is_file()


def test_missing_data_skips_with_a_clear_message(tmp_path):
    result = CliRunner().invoke(cli, ["bench", "rgb", "--data", str(tmp_path / "none.json")])
    assert result.exit_code == 0
    assert result.output.startswith("skipped: RGB data not found at")


@pytest.mark.slow
def test_cli_slice_of_the_real_file(shared_data, tmp_path):
    path = shared_data / DATA_FILE
    if not path.is_file():
        pytest.skip(f"{path} not found")
    out = tmp_path / "bench"
    args = [
        "bench",
        "rgb",
        "--data",
        str(path),
        "--generators",
        "extractive",
        "--limit",
        "8",
        "--embedder",
        "hashing",
        "--no-progress",
        "--out",
        str(out),
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    saved = ARTIFACTS["bench-rgb"].model_validate_json((out / "bench.json").read_text())
    assert isinstance(saved, RgbBench) and saved.questions == 8
    assert [r.questions for r in saved.rows] == [8, 8]
    assert "corpus_contradiction probe" in (out / "bench.md").read_text()

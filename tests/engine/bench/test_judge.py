"""``probeguard bench judge``: the string baselines, the records built from the data, the
cluster bootstrap, a tiny hand-made dataset end to end (fast), and a seeded slice of the
shared data through the CLI (slow; skipped without the data)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from probeguard.cli.main import cli
from probeguard.core.errors import InputError
from probeguard.dataset.squad import load_squad
from probeguard.engine.bench.judge import cluster_bootstrap, run_judge
from probeguard.engine.bench.judge_data import (
    HALUEVAL_FILE,
    XQUAD_FILE,
    overlap,
    verbatim,
    xquad_records,
    xquad_swapped,
)
from probeguard.results import ARTIFACTS, JudgeBench

HALUEVAL_ROWS = [
    (
        "Paris is the capital of France.The Seine flows through Paris.",
        "What river flows through the capital of France?",
        "The Seine",
        "The Thames flows through it.",
    ),
    (
        "Marie Curie won the Nobel Prize in Physics in 1903.She was born in Warsaw.",
        "In which city was the 1903 physics laureate born?",
        "Warsaw",
        "She was born in Krakow in 1867.",
    ),
    (
        "Mount Everest is 8,849 metres high.It lies in the Himalayas.",
        "How high is the mountain in the Himalayas?",
        "8,849 metres",
        "It is 7,200 metres high.",
    ),
]

XQUAD = {
    "version": "1.1",
    "data": [
        {
            "title": "Rivers",
            "paragraphs": [
                {
                    "context": "The Rhine rises in the Swiss Alps and flows to the North Sea.",
                    "qas": [
                        {
                            "id": "q1",
                            "question": "Where does the Rhine rise?",
                            "answers": [{"answer_start": 23, "text": "the Swiss Alps"}],
                        },
                        {
                            "id": "q2",
                            "question": "Where does the Rhine flow to?",
                            "answers": [{"answer_start": 50, "text": "the North Sea"}],
                        },
                    ],
                }
            ],
        },
        {
            "title": "Computers",
            "paragraphs": [
                {
                    "context": "The first Apple computer was sold in 1976 for 666 dollars.",
                    "qas": [
                        {
                            "id": "q3",
                            "question": "When was the first Apple computer sold?",
                            "answers": [{"answer_start": 37, "text": "1976"}],
                        },
                        {
                            "id": "q4",
                            "question": "What did the first Apple computer cost?",
                            "answers": [{"answer_start": 46, "text": "666 dollars"}],
                        },
                    ],
                }
            ],
        },
    ],
}


@pytest.fixture
def tiny_data(tmp_path):
    (tmp_path / HALUEVAL_FILE).parent.mkdir(parents=True)
    (tmp_path / HALUEVAL_FILE).write_text(
        "".join(
            json.dumps({"knowledge": k, "question": q, "right_answer": r, "hallucinated_answer": h})
            + "\n"
            for k, q, r, h in HALUEVAL_ROWS
        )
    )
    (tmp_path / XQUAD_FILE).parent.mkdir(parents=True)
    (tmp_path / XQUAD_FILE).write_text(json.dumps(XQUAD))
    return tmp_path


def test_string_baselines():
    contexts = ["The Seine flows through Paris.", "Paris is in France."]
    assert verbatim("the seine", contexts) == 1.0
    assert verbatim("Seine river", contexts) == 0.0
    assert verbatim("Sei", contexts) == 0.0  # word boundaries
    assert overlap("The Seine river", contexts) == pytest.approx(1 / 2)  # "the" is dropped
    assert overlap("Paris, France", contexts) == 1.0
    assert math.isnan(overlap("the", contexts))


def test_squad_loader_flattens_and_names_bad_fields(tiny_data, tmp_path):
    items = load_squad(tiny_data / XQUAD_FILE)
    assert [it.id for it in items] == ["q1", "q2", "q3", "q4"]
    assert [it.paragraph for it in items] == [0, 0, 1, 1]
    assert items[0].answers == ("the Swiss Alps",)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"data": [{"title": "t", "paragraphs": [{"qas": []}]}]}))
    with pytest.raises(InputError) as info:
        load_squad(bad)
    assert info.value.field == "context"


def test_swapped_variant_takes_another_articles_paragraph(tiny_data):
    items = load_squad(tiny_data / XQUAD_FILE)
    paragraphs = [items[0], items[2]]
    swaps = xquad_swapped(items, paragraphs, np.random.default_rng(3))
    swapped = [s for s in swaps if s is not None]
    assert len(swapped) == 2
    for item, s in zip(items, swaps):
        if s is not None:
            assert not s.label and s.record.retrieval_context != (item.context,)
            assert s.record.ground_truth == item.answers[0]
    gold = xquad_records(items)
    assert all(r.label and r.record.retrieval_context == (i.context,) for r, i in zip(gold, items))
    with pytest.raises(InputError):
        xquad_swapped(items[:2], [items[0]], np.random.default_rng(0))


def test_cluster_bootstrap_is_seeded_and_brackets_the_value():
    values = np.asarray([0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0])
    clusters = ["a", "a", "b", "b", "c", "c", "d", "d"]
    stat = lambda idx: float(values[idx].mean())
    one = cluster_bootstrap(stat, clusters, rng=np.random.default_rng(1), resamples=300)
    two = cluster_bootstrap(stat, clusters, rng=np.random.default_rng(1), resamples=300)
    assert one == two
    assert one.low <= one.value == 0.625 <= one.high and one.n == 8
    empty = cluster_bootstrap(stat, [], rng=np.random.default_rng(1))
    assert math.isnan(empty.value) and empty.n == 0


def test_tiny_dataset_end_to_end(tiny_data):
    result = run_judge(tiny_data, seed=5, resamples=200)
    assert ARTIFACTS["bench-judge"] is JudgeBench
    h, x = result.halueval, result.xquad
    assert h is not None and x is not None
    assert (h.questions, h.records, h.split_rows) == (3, 6, 3)
    assert h.verbatim_auroc.value == 1.0  # right answers are in the text, hallucinated not
    assert (x.questions, x.paragraphs, x.swapped) == (4, 2, 2)
    assert x.verbatim.value == 1.0
    assert len(result.records) == 6 + 4 + 2
    parts = {r.part for r in result.records}
    assert parts == {"halueval", "xquad", "xquad_swapped"}
    for est in (h.faithfulness_auroc, h.overlap_auroc, x.faithful, x.recall_agreement):
        assert est.defined and est.low <= est.value <= est.high
    again = run_judge(tiny_data, seed=5, resamples=200)
    assert again.model_dump(exclude={"scoring_ms_per_record"}) == result.model_dump(
        exclude={"scoring_ms_per_record"}
    )
    with pytest.raises(InputError):
        run_judge(tiny_data, halueval_limit=0)


def test_cli_writes_table_and_json_and_skips_without_data(tiny_data, tmp_path):
    runner = CliRunner()
    out = tmp_path / "out"
    result = runner.invoke(
        cli,
        ["bench", "judge", "--data-dir", str(tiny_data), "--resamples", "100", "--out", str(out)],
    )
    assert result.exit_code == 0, result.output
    assert "HaluEval" in result.output and "XQuAD" in result.output
    saved = JudgeBench.model_validate_json((out / "bench.json").read_text())
    assert saved.kind == "bench-judge" and saved.xquad is not None
    assert "verbatim baseline" in (out / "bench.md").read_text()
    missing = runner.invoke(cli, ["bench", "judge", "--data-dir", str(tmp_path / "none")])
    assert missing.exit_code == 0 and "skipped" in missing.output


@pytest.mark.slow
def test_shared_data_slice(shared_data, tmp_path):
    for rel in (HALUEVAL_FILE, XQUAD_FILE):
        if not (shared_data / rel).is_file():
            pytest.skip(f"{shared_data / rel} not found")
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli,
        [
            "bench", "judge", "--data-dir", str(shared_data), "--halueval", "60",
            "--xquad", "80", "--resamples", "300", "--seed", "7", "--out", str(out),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    bench = JudgeBench.model_validate_json((out / "bench.json").read_text())
    h, x = bench.halueval, bench.xquad
    assert h is not None and x is not None
    assert (h.questions, h.records, x.questions, x.swapped) == (60, 120, 80, 40)
    assert len(bench.records) == 120 + 80 + 40
    assert h.verbatim_auroc.value > 0.5
    assert x.verbatim.value > 0.9 and x.verbatim_agreement.value > 0.8
    estimates = [
        h.faithfulness_auroc, h.verbatim_auroc, h.overlap_auroc, h.faithful_right,
        h.faithful_hallucinated, h.answer_relevancy_median_right, x.faithful, x.verbatim,
        x.overlap, x.answer_relevancy_median, x.recall_full, x.recall_agreement,
        x.verbatim_agreement, x.recall_when_present, x.recall_when_absent,
    ]  # fmt: skip
    for est in estimates:
        assert est.n > 0 and 0.0 <= est.low <= est.value <= est.high <= 1.0, est

"""`probeguard eval` end to end through the real CLI: the offline judge, the real reference
pipeline (hashing embedder, extractive generator) for records without an answer, thresholds
→ exit codes, tag facets, byte-identical reports, and bad input → exit 2 with nothing
written."""

from __future__ import annotations

import json
import re
import textwrap

import pytest
from click.testing import CliRunner

from probeguard.cli.main import cli

CONTEXTS = [
    "Items can be returned within 30 days. Refunds take 5 days.",
    "Shipping is free on all orders. Returns cost $10.",
]
RECORDS = [
    {
        "id": "four-claims",
        "input": "How long is the return window?",
        # three supported claims and one the second chunk contradicts
        "answer": "Items can be returned within 30 days. Refunds take 5 days. "
        "Shipping is free on all orders. Returns cost $50.",
        "groundTruth": "Items can be returned within 30 days.",
        "retrievalContext": CONTEXTS,
        "tags": ["returns"],
    },
    {
        "id": "faithful",
        "input": "Is shipping free?",
        "answer": "Shipping is free on all orders.",
        "retrievalContext": CONTEXTS,
        "retrievalRelevance": [False, True],
        "tags": ["shipping"],
    },
]


def _invoke(*args):
    return CliRunner().invoke(cli, ["eval", *map(str, args)])


# the rank-2 relevant chunk of "faithful" puts the mean context precision at 0.75
RELAXED = (
    "--threshold",
    "contextual_relevancy=off",
    "--threshold",
    "answer_relevancy=off",
    "--threshold",
    "context_precision=0.7",
)


@pytest.fixture
def dataset(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in RECORDS) + "\n")
    return path


def test_one_unsupported_claim_of_four_scores_075_and_the_report_names_it(dataset, tmp_path):
    out = tmp_path / "out"
    result = _invoke(dataset, "--out", out, *RELAXED)
    data = json.loads((out / "eval.json").read_text())
    first = {r["id"]: r for r in data["results"]}["four-claims"]
    assert first["metrics"]["faithfulness"]["value"] == pytest.approx(0.75)
    (bad,) = [c for c in first["claims"] if c["label"] != "supported"]
    assert bad["label"] == "contradicted" and bad["contradicting_chunk_id"] == "ctx-2"
    report = (out / "eval.md").read_text()
    assert "contradicted: “Returns cost $50.” — chunk ctx-2 says: “Returns cost $10.”" in report
    # faithfulness mean (0.75 + 1.0) / 2 < 0.90: the default threshold fails → exit 1
    assert result.exit_code == 1, result.output
    assert data["thresholds"]["failed"] == ["faithfulness"] and "FAIL" in report
    passing = _invoke(
        dataset, "--out", tmp_path / "ok", *RELAXED, "--threshold", "faithfulness=0.85"
    )
    assert passing.exit_code == 0, passing.output
    assert "**PASS**" in (tmp_path / "ok" / "eval.md").read_text()


def test_tag_facets_reference_precision_and_unscored_counts(dataset, tmp_path):
    _invoke(dataset, "--out", tmp_path / "o")
    data = json.loads((tmp_path / "o" / "eval.json").read_text())
    summary = data["summary"]
    assert set(summary["by_tag"]) == {"returns", "shipping"}
    assert summary["by_tag"]["shipping"]["metrics"]["faithfulness"]["mean"]["value"] == 1.0
    second = {r["id"]: r for r in data["results"]}["faithful"]
    assert second["precision_source"] == "reference"
    assert second["metrics"]["context_precision"]["value"] == 0.5  # relevant chunk at rank 2
    # context recall needs groundTruth: one record scored, one unscored (not averaged as 0)
    recall = summary["metrics"]["context_recall"]
    assert recall["mean"]["n"] == 1 and recall["unscored"] == 1
    assert recall["mean"]["value"] == 1.0
    assert second["metrics"]["context_recall"]["value"] is None
    assert "| returns | 1 |" in (tmp_path / "o" / "eval.md").read_text()


def test_same_inputs_give_a_byte_identical_report(dataset, tmp_path):
    _invoke(dataset, "--out", tmp_path / "a")
    _invoke(dataset, "--out", tmp_path / "b")
    assert (tmp_path / "a" / "eval.md").read_bytes() == (tmp_path / "b" / "eval.md").read_bytes()
    html = (tmp_path / "a" / "eval.html").read_bytes()
    assert html == (tmp_path / "b" / "eval.html").read_bytes()
    assert (tmp_path / "a" / "eval.json").read_bytes() == (
        tmp_path / "b" / "eval.json"
    ).read_bytes()


def test_bad_record_exits_2_names_row_and_field_and_writes_nothing(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text('input,retrievalContext\n"Q one?","[""a""]"\n"Q two?",not json\n')
    out = tmp_path / "out"
    result = _invoke(path, "--out", out)
    assert result.exit_code == 2
    assert "row 2" in result.output and "field 'retrievalContext'" in result.output
    assert not out.exists()
    bad_threshold = _invoke(path, "--out", out, "--threshold", "faithfulness=1.5")
    assert bad_threshold.exit_code == 2 and "[0, 1]" in bad_threshold.output


def test_records_without_answer_are_answered_by_the_reference_pipeline(tmp_path):
    corpus = [
        {
            "id": "refunds",
            "text": "Items can be returned within 30 days of delivery. "
            "Refunds are issued to the original payment method.",
        },
        {"id": "leave", "text": "Staff get 25 days of annual leave each year."},
        {"id": "office", "text": "The office is open from 9 am to 5 pm on weekdays."},
    ]
    (tmp_path / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in corpus) + "\n")
    (tmp_path / "eval.yaml").write_text(
        textwrap.dedent("""
        corpus: {path: corpus.jsonl}
        pipeline:
          reference:
            embedder: {name: hashing, dim: 1024}
            retriever: {name: dense}
            top_k: 2
            generator: {name: extractive}
        runner: {cache_dir: null}
        judge: {position_swap: true}
        eval: {thresholds: {context_precision: 0.5}}
    """)
    )
    records = [
        {
            "id": "asks",
            "input": "How much annual leave do staff get?",
            "groundTruth": "Staff get 25 days of annual leave.",
            "tags": "hr, leave",
        },
        {
            "id": "given",
            "input": "When is the office open?",
            "answer": "The office is open from 9 am to 5 pm on weekdays.",
            "retrievalContext": ["The office is open from 9 am to 5 pm on weekdays."],
        },
    ]
    path = tmp_path / "data.json"
    path.write_text(json.dumps(records))
    result = _invoke(path, "--out", tmp_path / "out", "--config", tmp_path / "eval.yaml")
    assert result.exit_code in (0, 1), result.output
    data = json.loads((tmp_path / "out" / "eval.json").read_text())
    assert data["pipeline"]["cases"] == 1 and data["pipeline"]["errors"] == 0
    assert data["config"]["eval"]["thresholds"]["context_precision"] == 0.5
    asks, given = data["results"]
    assert asks["answer_from"] == "pipeline" and asks["contexts_from"] == "pipeline"
    assert "25 days" in asks["answer"]
    assert asks["contexts"][0]["doc_id"] == "leave" and asks["tags"] == ["hr", "leave"]
    assert asks["metrics"]["context_recall"]["value"] == 1.0
    assert asks["metrics"]["faithfulness"]["value"] == 1.0
    assert given["answer_from"] == "record"
    assert data["judge"]["claims"] == "swap(offline)"


def test_records_without_answer_and_no_corpus_is_a_clear_error(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"input": "Who?"}) + "\n")
    result = _invoke(path, "--out", tmp_path / "o")
    assert result.exit_code == 2 and "corpus.path" in result.output


def test_thresholds_follow_file_env_flag_precedence(dataset, tmp_path):
    (tmp_path / "c.yaml").write_text("eval: {thresholds: {faithfulness: 0.95}}\n")
    runner = CliRunner()
    args = [
        "eval",
        str(dataset),
        "--out",
        str(tmp_path / "o"),
        "--config",
        str(tmp_path / "c.yaml"),
    ]

    def faithfulness_threshold(*extra, env=None):
        result = runner.invoke(cli, [*args, *extra], env=env or {})
        assert result.exit_code in (0, 1), result.output
        data = json.loads((tmp_path / "o" / "eval.json").read_text())
        return data["thresholds"]["checks"]["faithfulness"]["threshold"]

    assert faithfulness_threshold() == 0.95
    env = {"PROBEGUARD_EVAL__THRESHOLDS__FAITHFULNESS": "0.6"}
    assert faithfulness_threshold(env=env) == 0.6
    assert faithfulness_threshold("--threshold", "faithfulness=0.7", env=env) == 0.7


def test_untrusted_record_text_is_escaped_in_the_report(tmp_path):
    evil = "x | y <img src=http://e/x> [link](http://e) `code`"
    path = tmp_path / "d.jsonl"
    path.write_text(
        json.dumps(
            {
                "id": evil,
                "input": evil + "?",
                "answer": evil + ". Returns cost $50.",
                "retrievalContext": ["Returns cost $10. " + evil],
                "tags": [evil],
            }
        )
        + "\n"
    )
    _invoke(path, "--out", tmp_path / "o")
    report = (tmp_path / "o" / "eval.md").read_text()
    assert not re.search(r"(?<!\\)<img", report) and "](http" not in report
    assert "x | y" not in report and "\\<img" in report
    page = (tmp_path / "o" / "eval.html").read_text()
    assert "<img" not in page and "&lt;img src=http://e/x&gt;" in page

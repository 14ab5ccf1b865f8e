"""``probeguard bench squad``: the SQuAD scoring rules on hand-made answers, a tiny hand-made
XQuAD-format file end to end (hashing embedder, extractive generator), a seeded slice of the
real file through the CLI (skipped without the data), and the skip message without it."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from probeguard.cli.main import cli
from probeguard.core.errors import InputError
from probeguard.engine.bench.squad import DATA_FILE, run_squad, score_answer, summarize
from probeguard.results import ARTIFACTS, SquadBench
from probeguard.results.bench_qa import SquadOutcome

PARAGRAPHS = [
    (
        "Super_Bowl_50",
        "Super Bowl 50 was played at Levi's Stadium. The Denver Broncos defeated the Carolina "
        "Panthers 24-10.",
        [("q1", "Which team won Super Bowl 50?", "Denver Broncos")],
    ),
    (
        "Warsaw",
        "Warsaw is the capital of Poland. The Vistula river flows through Warsaw.",
        [("q2", "Which river flows through Warsaw?", "Vistula")],
    ),
    (
        "Oxygen",
        "Oxygen was discovered by Carl Wilhelm Scheele in 1771. It is a chemical element.",
        [("q3", "Who discovered oxygen?", "Carl Wilhelm Scheele")],
    ),
]


def write_xquad(path) -> None:
    data = [
        {
            "title": title,
            "paragraphs": [
                {
                    "context": context,
                    "qas": [
                        {
                            "id": qid,
                            "question": q,
                            "answers": [{"answer_start": context.index(a), "text": a}],
                        }
                        for qid, q, a in qas
                    ],
                }
            ],
        }
        for title, context, qas in PARAGRAPHS
    ]
    path.write_text(json.dumps({"version": "1.1", "data": data}), encoding="utf-8")


@pytest.mark.parametrize(
    ("answer", "golds", "expected"),
    [
        # Official normalisation: case, punctuation, articles a/an/the, whitespace.
        ("The  Denver Broncos!", ["Denver Broncos"], (1.0, 1.0, True)),
        # F1 on words: P = 2/3, R = 1 -> 0.8; citation markers are stripped first.
        ("the Denver Broncos won [1]", ["Denver Broncos"], (0.0, 0.8, True)),
        # Max over the gold answers.
        ("Broncos", ["Carolina Panthers", "Broncos"], (1.0, 1.0, True)),
        # Containment is on word boundaries: "Bronco" is not in "Broncos".
        ("Broncos", ["Bronco"], (0.0, 0.0, False)),
        ("I don't know.", ["Denver Broncos"], (0.0, 0.0, False)),
    ],
)
def test_score_answer_follows_squad_rules(answer, golds, expected):
    em, f1, contains = score_answer(answer, golds)
    assert (em, contains) == (expected[0], expected[2])
    assert f1 == pytest.approx(expected[1])


def test_summarize_rates_and_unscored_retrieval():
    outcomes = [
        SquadOutcome(
            id=str(i), answer="", exact_match=em, f1=f1, contains=c, refused=r, gold_rank=rank
        )
        for i, (em, f1, c, r, rank) in enumerate(
            [(1.0, 1.0, True, False, 1), (0.0, 0.5, True, False, None), (0.0, 0.0, False, True, 2)]
        )
    ]
    m = summarize(outcomes, retrieval=True, seed=0)
    assert (m.exact_match.value, m.exact_match.n, m.exact_match.method) == (1 / 3, 3, "wilson")
    assert m.f1.value == pytest.approx(0.5) and m.f1.method == "bootstrap"
    assert m.contains.value == pytest.approx(2 / 3) and m.refusals.value == pytest.approx(1 / 3)
    assert m.gold_in_top_k.value == pytest.approx(2 / 3)
    oracle = summarize(outcomes, retrieval=False, seed=0)
    assert math.isnan(oracle.gold_in_top_k.value) and oracle.gold_in_top_k.n == 0


def test_tiny_file_end_to_end(tmp_path):
    path = tmp_path / "xquad.json"
    write_xquad(path)
    result = run_squad(
        path, tmp_path / "out", generators=["extractive"], embedder="hashing", top_k=2
    )
    assert [(r.generator, r.condition) for r in result.rows] == [
        ("extractive", "retrieval"),
        ("extractive", "oracle"),
    ]
    oracle = result.rows[1]
    assert oracle.questions == 3 and oracle.errors == 0
    # The extractive generator quotes context sentences: some hold the gold span.
    assert oracle.metrics.contains.value > 0 and oracle.metrics.contains.n == 3
    assert all(o.gold_rank is None for o in oracle.outcomes)
    assert (tmp_path / "out" / "extractive-retrieval" / "run.jsonl").is_file()
    again = run_squad(path, None, generators=["extractive"], embedder="hashing", top_k=2)
    assert again.model_dump(exclude={"rows"}) == result.model_dump(exclude={"rows"})
    dump = lambda res: [r.metrics.model_dump_json() for r in res.rows]
    assert dump(again) == dump(result)


def test_bad_names_and_limits_are_input_errors(tmp_path):
    path = tmp_path / "xquad.json"
    write_xquad(path)
    with pytest.raises(InputError, match="unknown generators gpt9"):
        run_squad(path, generators=["gpt9"])
    with pytest.raises(InputError, match="unknown conditions"):
        run_squad(path, generators=["extractive"], conditions=["closed_book"])
    with pytest.raises(InputError) as info:
        run_squad(path, generators=["extractive"], limit=0)
    assert info.value.field == "limit"


def test_missing_data_skips_with_a_clear_message(tmp_path):
    result = CliRunner().invoke(cli, ["bench", "squad", "--data", str(tmp_path / "none.json")])
    assert result.exit_code == 0
    assert result.output.startswith("skipped: XQuAD data not found at")
    assert "PROBEGUARD_SHARED_DATA" in result.output


def test_cli_slice_of_the_real_file(shared_data, tmp_path):
    path = shared_data / DATA_FILE
    if not path.is_file():
        pytest.skip(f"{path} not found")
    out = tmp_path / "bench"
    args = [
        "bench",
        "squad",
        "--data",
        str(path),
        "--generators",
        "extractive",
        "--limit",
        "12",
        "--embedder",
        "hashing",
        "--no-progress",
        "--out",
        str(out),
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    saved = ARTIFACTS["bench-squad"].model_validate_json((out / "bench.json").read_text())
    assert isinstance(saved, SquadBench) and saved.corpus_docs == 240
    assert [r.questions for r in saved.rows] == [12, 12]
    assert "| extractive | oracle |" in (out / "bench.md").read_text()
    assert "<td>extractive</td><td>oracle</td>" in (out / "bench.html").read_text()

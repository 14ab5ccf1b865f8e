"""``probeguard bench clapnq``: the loader (errors naming line and field), the measures on
hand-made outcomes, a tiny hand-made ClapNQ-format pair of files end to end (hashing embedder,
extractive generator), a real-data slice through the CLI (skipped without the data) and the
skip message."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from probeguard.cli.main import cli
from probeguard.core.errors import InputError
from probeguard.engine.bench.clapnq import run_clapnq, summarize
from probeguard.engine.bench.clapnq_data import FILES, build_cases, load_clapnq
from probeguard.results import ARTIFACTS, ClapnqBench
from probeguard.results.bench_qa import ClapnqOutcome

NAN = math.nan


def row(i, question, text, answer):
    return {
        "id": str(i),
        "input": question,
        "passages": [{"title": "Lake Orrin", "text": text, "sentences": [text]}],
        "output": [{"answer": answer, "selected_sentences": [], "meta": {}}],
    }


ANSWERABLE = [
    row(
        1,
        "how deep is lake orrin",
        "Lake Orrin is 212 metres deep. It lies in the north.",
        "Lake Orrin is 212 metres deep.",
    ),
    row(
        2,
        "who first mapped lake orrin",
        "Lake Orrin was first mapped by Ada Venn in 1840.",
        "It was first mapped by Ada Venn in 1840.",
    ),
]
UNANSWERABLE = [
    row(3, "what fish live in lake orrin", "The lake freezes over every winter.", ""),
    row(4, "how many islands does lake orrin have", "Ferries cross the lake in summer.", ""),
]


def write_clapnq(root, answerable=ANSWERABLE, unanswerable=UNANSWERABLE):
    for flag, rows in ((True, answerable), (False, unanswerable)):
        path = root / FILES[flag]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")


def outcome(answerable, refused, faith=NAN, recall=NAN, rank=None):
    return ClapnqOutcome(
        id="x",
        answerable=answerable,
        answer="",
        refused=refused,
        faithfulness=faith,
        rouge_l_recall=recall,
        gold_rank=rank,
    )


def test_summarize_counts_each_population_apart():
    outcomes = [
        outcome(True, False, 1.0, 0.5, 1),
        outcome(True, False, 0.5, 1.0, None),
        outcome(True, False, NAN, 0.0, 2),  # unscored faithfulness: left out, not 0
        outcome(True, True),
        outcome(False, True),
        outcome(False, False),
        outcome(False, True),
    ]
    m = summarize(outcomes, retrieval=True, seed=0)
    assert (m.refusal_unanswerable.value, m.refusal_unanswerable.n) == (2 / 3, 3)
    assert (m.answered_answerable.value, m.answered_answerable.n) == (3 / 4, 4)
    assert (m.faithfulness.value, m.faithfulness.n) == (0.75, 2)
    assert (m.fully_faithful.value, m.fully_faithful.n) == (0.5, 2)
    assert (m.rouge_l_recall.value, m.rouge_l_recall.n) == (0.5, 3)
    assert (m.gold_in_top_k.value, m.gold_in_top_k.n) == (0.5, 4)
    assert summarize(outcomes, retrieval=False, seed=0).gold_in_top_k.n == 0


def test_loader_names_line_and_field(tmp_path):
    write_clapnq(tmp_path)
    items = load_clapnq(tmp_path / FILES[False], answerable=False)
    assert [it.answers for it in items] == [(), ()]
    cases = build_cases(items, "oracle")
    assert cases[0].expected.mode == "abstain"
    assert cases[0].variation.contexts == ("The lake freezes over every winter.",)
    bad = {**ANSWERABLE[1], "output": [{"answer": " "}]}
    write_clapnq(tmp_path, answerable=[ANSWERABLE[0], bad])
    with pytest.raises(InputError) as info:
        load_clapnq(tmp_path / FILES[True], answerable=True)
    assert (info.value.line, info.value.field) == (2, "output")
    write_clapnq(tmp_path, answerable=[{**ANSWERABLE[0], "passages": []}])
    with pytest.raises(InputError) as info:
        load_clapnq(tmp_path / FILES[True], answerable=True)
    assert (info.value.line, info.value.field) == (1, "passages")


def test_tiny_files_end_to_end(tmp_path):
    write_clapnq(tmp_path)
    result = run_clapnq(
        tmp_path, tmp_path / "out", generators=["extractive"], embedder="hashing", top_k=2
    )
    assert (result.answerable, result.unanswerable, result.corpus_docs) == (2, 2, 4)
    assert [r.condition for r in result.rows] == ["retrieval", "oracle"]
    oracle = result.rows[1]
    assert oracle.metrics.refusal_unanswerable.n == 2
    assert oracle.metrics.answered_answerable.n == 2
    assert not math.isnan(result.gold_faithfulness.value)
    assert (tmp_path / "out" / "extractive-oracle" / "run.jsonl").is_file()


def test_missing_data_skips_with_a_clear_message(tmp_path):
    result = CliRunner().invoke(cli, ["bench", "clapnq", "--data-dir", str(tmp_path)])
    assert result.exit_code == 0
    assert result.output.startswith("skipped: ClapNQ data not found at")
    assert "clapnq_dev_answerable.jsonl" in result.output


def test_cli_slice_of_the_real_files(shared_data, tmp_path):
    if not all((shared_data / FILES[a]).is_file() for a in (True, False)):
        pytest.skip(f"ClapNQ files not found under {shared_data}")
    out = tmp_path / "bench"
    args = [
        "bench",
        "clapnq",
        "--data-dir",
        str(shared_data),
        "--generators",
        "extractive",
        "--limit",
        "6",
        "--embedder",
        "hashing",
        "--no-progress",
        "--out",
        str(out),
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    saved = ARTIFACTS["bench-clapnq"].model_validate_json((out / "bench.json").read_text())
    assert isinstance(saved, ClapnqBench) and (saved.answerable, saved.unanswerable) == (6, 6)
    assert saved.corpus_docs == 600
    assert "| extractive | retrieval |" in (out / "bench.md").read_text()

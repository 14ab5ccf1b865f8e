"""``probeguard bench judges``: the loaders (validated, errors naming file/line/field), the
seeded stratified order, split and limit, the baseline, a tiny hand-made dataset end to end
(offline judge, and the LLM judge against a real OpenAI-compatible server on 127.0.0.1), skips
when data or a judge is absent, and a seeded slice of the shared data through the CLI."""

from __future__ import annotations

import asyncio
import gzip
import json
import math
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from aiohttp import web
from click.testing import CliRunner

from probeguard.cli.main import cli
from probeguard.core.artifacts import artifact_json
from probeguard.core.errors import InputError
from probeguard.detectors.config import JudgeConfig, LlmJudgeConfig
from probeguard.engine.bench.judges import measure, paired, render_table, run_judges
from probeguard.engine.bench.judges_data import (
    BEGIN_COLUMNS,
    LabelledClaim,
    load_begin,
    load_judge_set,
    load_wice,
    stratified_order,
    take,
)
from probeguard.engine.bench.judges_models import build_specs, token_overlap
from probeguard.results import ARTIFACTS, JudgesBench
from testkit import completion, needs_smollm2, start_chat_server

# -- a tiny data folder in the three formats ------------------------------------------------------
WICE = [
    ("supported", "The Rhine flows into the North Sea.", ["The Rhine flows into the North Sea."]),
    (
        "not_supported",
        "The Rhine flows into the Black Sea.",
        ["The Rhine flows into the North Sea."],
    ),
    ("supported", "Marie Curie was born in Warsaw.", ["Marie Curie was born in Warsaw in 1867."]),
    ("partially_supported", "Curie was born in Paris in 1867.", ["Curie was born in Warsaw."]),
]
BEGIN = [
    (
        "The Eiffel Tower is 330 metres tall.",
        "the eiffel tower is 330 metres tall.",
        "Fully attributable",
    ),
    (
        "The Eiffel Tower is 330 metres tall.",
        "i love going to paris with my dog.",
        "Not fully attributable",
    ),
    ("Crayola began with chalk.", "crayola began with chalk.", "Fully attributable"),
    ("Crayola began with chalk.", "crayola was founded by a painter in 1950.", "Generic"),
]
HALUEVAL = [
    (
        "Paris is the capital of France.The Seine flows through Paris.",
        "What river flows through the capital of France?",
        "The Seine",
        "The Thames",
    ),
    (
        "Marie Curie won the Nobel Prize in 1903.She was born in Warsaw.",
        "Where was the 1903 laureate born?",
        "Warsaw",
        "Krakow",
    ),
    (
        "Mount Everest is 8,849 metres high.It lies in the Himalayas.",
        "How high is the Himalayan peak?",
        "8,849 metres",
        "7,200 metres",
    ),
    (
        "Lyon lies on the Rhone.The Rhone flows to the Mediterranean.",
        "Which sea does Lyon's river reach?",
        "The Mediterranean",
        "The Baltic",
    ),
]


def _wice_line(label: str, claim: str, evidence: list[str], i: int) -> str:
    meta = {"id": f"x{i}"}
    return json.dumps({"label": label, "claim": claim, "evidence": evidence, "meta": meta})


def write_data(root: Path) -> Path:
    (root / "wice").mkdir(parents=True)
    for split in ("dev", "test"):
        lines = [_wice_line(*row, i) for i, row in enumerate(WICE)]
        with gzip.open(root / "wice" / f"claim_{split}.jsonl.gz", "wt", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
    (root / "begin").mkdir()
    for split in ("dev", "test"):
        rows = ["\t".join(BEGIN_COLUMNS)]
        rows += ["\t".join(("t5", "wow", k, "hi there", r, lab)) for k, r, lab in BEGIN]
        (root / "begin" / f"begin_{split}_wow.tsv").write_text("\n".join(rows) + "\n")
    (root / "halueval").mkdir()
    (root / "halueval" / "qa_one_turn.jsonl").write_text(
        "\n".join(
            json.dumps({"knowledge": k, "question": q, "right_answer": a, "hallucinated_answer": h})
            for k, q, a, h in HALUEVAL
        )
        + "\n"
    )
    return root


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_data(tmp_path / "data")


# -- loaders ------------------------------------------------------------------------------------
def test_loaders_read_labels_and_contexts(data: Path):
    rng = np.random.default_rng(0)
    wice = load_judge_set(data, "wice", rng)
    assert sorted(r.label for r in wice.test) == [False, False, True, True]
    assert {r.id for r in wice.dev} == {"wice-x0", "wice-x1", "wice-x2", "wice-x3"}
    begin = load_judge_set(data, "begin", rng)
    generic = next(r for r in begin.test if "painter" in r.claim)
    assert generic.label is False  # Generic counts as "not fully attributable"
    halu = load_judge_set(data, "halueval", rng)
    assert len(halu.dev) == len(halu.test) == 4
    # a question's two answers stay together, in dev or in test
    assert {r.cluster for r in halu.dev}.isdisjoint({r.cluster for r in halu.test})
    assert all(r.question for r in halu.test)


def test_wice_passages_group_five_sentences(tmp_path: Path):
    path = tmp_path / "w.jsonl.gz"
    sentences = [f"Sentence {i}." for i in range(12)] + ["  "]
    with gzip.open(path, "wt") as fh:
        fh.write(_wice_line("supported", "A claim.", sentences, 0) + "\n")
    (rec,) = load_wice(path, "dev")
    assert len(rec.contexts) == 3 and rec.contexts[2] == "Sentence 10. Sentence 11."


def test_bad_wice_row_names_file_line_and_field(tmp_path: Path):
    path = tmp_path / "w.jsonl.gz"
    good = _wice_line("supported", "A claim.", ["It is so."], 0)
    bad = _wice_line("maybe", "A claim.", ["It is so."], 1)
    with gzip.open(path, "wt") as fh:
        fh.write(good + "\n" + bad + "\n")
    with pytest.raises(InputError) as err:
        load_wice(path, "dev")
    assert (err.value.file, err.value.line, err.value.field) == (str(path), 2, "label")


def test_bad_begin_row_names_file_line_and_field(tmp_path: Path):
    path = tmp_path / "b.tsv"
    header = "\t".join(BEGIN_COLUMNS)
    path.write_text(header + "\nt5\twow\tknow\tmsg\t \tGeneric\nt5\twow\tk\tm\n")
    with pytest.raises(InputError) as err:
        load_begin(path, "dev")
    assert (err.value.line, err.value.field) == (2, "response")
    path.write_text(header + "\nt5\twow\tk\tm\n")
    with pytest.raises(InputError, match="6 tab-separated fields") as err:
        load_begin(path, "dev")
    assert err.value.line == 2


# -- order, limit, baseline ---------------------------------------------------------------------
def test_stratified_order_keeps_shares_in_every_prefix():
    strata = ["a"] * 6 + ["b"] * 3
    order = stratified_order(strata, np.random.default_rng(1))
    assert sorted(order) == list(range(9))
    picked = [strata[i] for i in order]
    # keys: a at 1/12, 3/12, ...; b at 1/6, 3/6, 5/6 -> a a b a a b a a b? by key:
    # a: .083 .25 .417 .583 .75 .917; b: .167 .5 .833
    assert picked == ["a", "b", "a", "a", "b", "a", "a", "b", "a"]
    assert order == stratified_order(strata, np.random.default_rng(1))


def test_take_keeps_whole_clusters():
    recs = [
        LabelledClaim(f"r{i}", "d", "c", ("x",), i % 2 == 0, cluster=f"q{i // 2}") for i in range(6)
    ]
    assert [r.id for r in take(recs, 3)] == ["r0", "r1"]
    assert take(recs, None) == tuple(recs)


def test_token_overlap_by_hand():
    # content words of the claim: rhine, flows, north, sea -> 3 of 4 in the context
    assert token_overlap("The Rhine flows to the North Sea.", ["Rhine flows into the sea"]) == 0.75
    assert math.isnan(token_overlap("the of", ["anything"]))


def test_measure_uses_the_dev_threshold_on_test():
    def rec(i: int, label: bool) -> LabelledClaim:
        return LabelledClaim(f"r{i}", "d", "c", ("x",), label, cluster=f"r{i}")

    dev = [(rec(0, False), 0.2), (rec(1, False), 0.4), (rec(2, True), 0.6), (rec(3, True), 0.8)]
    test = [
        (rec(4, False), 0.5),
        (rec(5, True), 0.7),
        (rec(6, True), 0.5),
        (rec(7, False), math.nan),
    ]
    row = measure("j", "judge", "d", dev, test, rng=np.random.default_rng(0), resamples=50)
    assert row.threshold == 0.6
    # test at t=0.6: positives 0.7 (hit) 0.5 (miss); negative 0.5 (right) -> BA (1/2 + 1)/2
    assert row.balanced_accuracy.value == 0.75
    assert row.unscored_test == 1 and row.balanced_accuracy.n == 3
    assert row.auroc.value == pytest.approx((1 + 0.5) / 2)  # 0.7 > 0.5; 0.5 ties 0.5
    assert row.balanced_accuracy_as_judged is not None
    assert row.balanced_accuracy_as_judged.value == 0.5  # nothing reaches 1.0
    # the judge's own calls, given apart from the graded score (the NaN record's is dropped)
    called = measure(
        "j",
        "judge",
        "d",
        dev,
        test,
        rng=np.random.default_rng(0),
        resamples=50,
        decisions=[False, True, True, True],
    )
    assert called.balanced_accuracy_as_judged is not None
    assert called.balanced_accuracy_as_judged.value == 1.0


def test_paired_difference_against_the_baseline():
    def rec(i: int, label: bool) -> LabelledClaim:
        return LabelledClaim(f"r{i}", "d", "c", ("x",), label, cluster=f"r{i}")

    recs = [rec(i, i % 2 == 0) for i in range(40)]
    dev = [(r, 0.9 if r.label else 0.1) for r in recs[:20]]
    judge_test = [(r, 0.9 if r.label else 0.1) for r in recs[20:]]  # always right
    base_test = [(r, 0.9 if i % 4 < 2 else 0.1) for i, r in enumerate(recs[20:])]  # half right
    rng = np.random.default_rng(0)
    row = measure("j", "judge", "d", dev, judge_test, rng=rng, resamples=50)
    base = measure("b", "baseline", "d", dev, base_test, rng=rng, resamples=50)
    out = paired(row, base, judge_test, base_test, rng=np.random.default_rng(1), resamples=200)
    ba, area = out.balanced_accuracy_vs_baseline, out.auroc_vs_baseline
    assert ba is not None and area is not None
    assert ba.value == pytest.approx(1.0 - 0.5) and ba.low > 0.0  # beaten by a shown margin
    assert area.value == pytest.approx(1.0 - 0.5) and area.n == 20
    same = paired(row, row, judge_test, judge_test, rng=np.random.default_rng(1), resamples=50)
    assert same.auroc_vs_baseline is not None and same.auroc_vs_baseline.high == 0.0


# -- end to end ------------------------------------------------------------------------------
def _timeless(result: JudgesBench) -> dict[str, Any]:
    data = artifact_json(result)
    for row in data["rows"]:
        row.pop("seconds")
    return data


def test_offline_end_to_end_is_deterministic_and_lists_skips(data: Path, tmp_path: Path):
    # No SmolLM2 weights at this path: the consensus's offline fallback cannot form either.
    config = JudgeConfig.model_validate({"smollm2": {"model_path": str(tmp_path / "none.gguf")}})
    names = ["offline", "llm", "nli", "consensus"]
    a = run_judges(data, judges=names, resamples=50, environ={}, config=config)
    b = run_judges(data, judges=names, resamples=50, environ={}, config=config)
    assert _timeless(a) == _timeless(b)  # the same but for wall seconds
    assert {(r.dataset, r.judge) for r in a.rows} == {
        (d, j) for d in ("wice", "begin", "halueval") for j in ("token_overlap", "offline")
    }
    skipped = {s.name: s.reason for s in a.skipped_judges}
    assert "PROBEGUARD_JUDGE__LLM__BASE_URL" in skipped["llm"]
    assert "nli" in skipped and "available: offline" in skipped["consensus"]
    assert "among offline, smollm2" in skipped["consensus"]  # the fallback was tried
    halu = next(r for r in a.rows if r.dataset == "halueval" and r.judge == "offline")
    assert halu.auroc_vs_baseline is not None  # paired with the baseline, which has none
    assert all(r.auroc_vs_baseline is None for r in a.rows if r.kind == "baseline")
    assert halu.balanced_accuracy.value == 1.0  # right answers verbatim, wrong ones absent
    assert JudgesBench.model_validate(json.loads(json.dumps(artifact_json(a)))) == a


def test_absent_data_is_a_clear_error_or_a_skipped_dataset(tmp_path: Path, data: Path):
    with pytest.raises(InputError, match="PROBEGUARD_SHARED_DATA"):
        run_judges(tmp_path / "nowhere", judges=["offline"], environ={})
    full = run_judges(data, judges=["offline"], resamples=20, environ={})
    (data / "begin" / "begin_test_wow.tsv").unlink()
    result = run_judges(data, judges=["offline"], resamples=20, environ={})
    assert [s.name for s in result.skipped_datasets] == ["begin"]
    # the other datasets' splits and rows do not depend on which datasets were found
    kept = [s for s in _timeless(full)["scores"] if s["dataset"] != "begin"]
    assert kept == _timeless(result)["scores"]
    assert [r for r in _timeless(full)["rows"] if r["dataset"] != "begin"] == _timeless(result)[
        "rows"
    ]
    assert "begin_test_wow.tsv" in result.skipped_datasets[0].reason
    out = CliRunner().invoke(cli, ["bench", "judges", "--data-dir", str(tmp_path / "nowhere")])
    assert out.exit_code == 0 and out.output.startswith("skipped:")


def test_unknown_judge_is_an_input_error(data: Path):
    with pytest.raises(InputError, match="unknown judge"):
        run_judges(data, judges=["oracle"], environ={})


def test_schema_lists_bench_judges():
    assert ARTIFACTS["bench-judges"] is JudgesBench
    out = CliRunner().invoke(cli, ["schema", "bench-judges"])
    assert out.exit_code == 0 and '"bench-judges"' in out.output


# -- the LLM judge against a real OpenAI-compatible server -----------------------------------------
_PASSAGE = re.compile(r"\[(\d+)\][^\n]*\n?(.*?)(?=\n\[\d+\]|\Z)", re.DOTALL)


def _scripted(body: dict[str, Any]) -> str:
    """Deterministic judgments: a passage supports the claim iff it contains the claim's
    last word (claim mode: one verdict per numbered passage)."""
    user = body["messages"][-1]["content"]
    claim = user.rsplit("Claim:", 1)[1].strip().rstrip(".").lower()
    passages = user.split("Claim:")[0]
    numbered = re.findall(r"\[(\d+)\]", passages)
    last = claim.split()[-1] if claim.split() else ""
    chunks = re.split(r"\[\d+\]", passages)[1:]
    verdicts = [
        {
            "passage": int(n),
            "label": "supported" if last and last in text.lower() else "unsupported",
            "evidence": "",
            "reason": "scripted",
        }
        for n, text in zip(numbered, chunks)
    ]
    return json.dumps({"verdicts": verdicts})


@pytest.fixture
def chat_server() -> Iterator[str]:
    loop = asyncio.new_event_loop()
    started = threading.Event()
    holder: dict[str, Any] = {}

    async def handle(request: web.Request) -> web.StreamResponse:
        return web.json_response(completion(_scripted(await request.json()), "judge-test"))

    async def start() -> None:
        holder["runner"], holder["url"] = await start_chat_server(handle)
        started.set()

    thread = threading.Thread(
        target=lambda: (loop.run_until_complete(start()), loop.run_forever()), daemon=True
    )
    thread.start()
    assert started.wait(10)
    try:
        yield holder["url"]
    finally:
        asyncio.run_coroutine_threadsafe(holder["runner"].cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


def test_llm_judge_and_consensus_through_a_local_server(data: Path, chat_server: str):
    config = JudgeConfig(
        llm=LlmJudgeConfig(base_url=chat_server, model="judge-test", api_key_env=None)
    )
    result = run_judges(data, judges=["llm", "consensus"], config=config, resamples=20, environ={})
    names = {(r.dataset, r.judge) for r in result.rows}
    assert ("wice", "llm") in names and ("halueval", "consensus") in names
    assert [s.name for s in result.skipped_judges] == []  # nli left out of the consensus
    llm_halu = next(r for r in result.rows if r.dataset == "halueval" and r.judge == "llm")
    assert llm_halu.unscored_test == 0 and not math.isnan(llm_halu.balanced_accuracy.value)
    assert "majority(offline,llm)" in result.settings.judge_config["consensus"]


def test_smollm2_is_skipped_with_a_reason_or_listed(data: Path):
    specs, skipped = build_specs(["smollm2"], JudgeConfig(), smollm2_limit=2, environ={})
    assert [s.name for s in specs][0] == "token_overlap"
    assert ("smollm2" in skipped) != any(s.name == "smollm2" for s in specs)


def _weights(tmp_path: Path) -> dict[str, Any]:
    """A ``judge.smollm2`` section over a stand-in GGUF file: the judge is built (its model loads
    on first use only), so composition is tested without running the model."""
    pytest.importorskip("cyllama")
    model = tmp_path / "stand-in.gguf"
    model.write_bytes(b"GGUF")
    return {"model_path": str(model)}


def test_consensus_falls_back_to_offline_and_smollm2(tmp_path: Path):
    config = JudgeConfig.model_validate({"smollm2": _weights(tmp_path)})
    specs, skipped = build_specs(["consensus"], config, smollm2_limit=3, environ={})
    (row,) = [s for s in specs if s.name == "consensus"]
    # Regression (issue 12): without an endpoint or NLI the consensus row was always skipped.
    assert skipped == {} and row.describe.startswith("majority(offline,smollm2) ")
    assert row.limit == 3  # judged as the smollm2 row is: one passage, its record cap


def test_configured_consensus_keeps_its_members(tmp_path: Path):
    config = JudgeConfig.model_validate(
        {
            "smollm2": _weights(tmp_path),
            "consensus": {"judges": ["offline", "nli"], "rule": "unanimous"},
        }
    )
    specs, skipped = build_specs(["consensus"], config, smollm2_limit=3, environ={})
    if "consensus" in skipped:  # no sentence-transformers here: no fallback to smollm2 either
        assert "among offline, nli" in skipped["consensus"]
    else:
        assert "smollm2" not in specs[-1].describe and specs[-1].limit is None


# -- real data ------------------------------------------------------------------------------------
def test_cli_on_a_seeded_slice_of_the_shared_data(shared_data: Path, tmp_path: Path):
    out = tmp_path / "bench"
    args = ["bench", "judges", "--data-dir", str(shared_data), "--judges", "offline"]
    args += ["--limit", "8", "--resamples", "50", "--out", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    saved = JudgesBench.model_validate_json((out / "bench.json").read_text())
    assert {r.dataset for r in saved.rows} == {"wice", "begin", "halueval"}
    assert all(r.test <= 8 and r.dev <= 8 for r in saved.rows)
    assert "Bespoke-MiniCheck-7B" in (out / "bench.md").read_text()


@needs_smollm2
def test_smollm2_on_a_slice_of_halueval(shared_data: Path, tmp_path: Path):
    (tmp_path / "halueval").symlink_to(shared_data / "halueval")  # the short prompts only
    result = run_judges(tmp_path, judges=["smollm2"], smollm2_limit=2, resamples=20, environ={})
    (row,) = [r for r in result.rows if r.judge == "smollm2"]
    assert (row.dataset, row.dev, row.test) == ("halueval", 2, 2) and row.seconds > 0
    # Regression (issue 12): the JSON prompt left every SmolLM2 record unscored.
    assert row.unscored_test == 0 and not math.isnan(row.auroc.value)
    assert [s.name for s in result.skipped_datasets] == ["wice", "begin"]


def test_measure_takes_the_one_se_plateau_midpoint_not_the_noisy_argmax():
    def rec(i: int, label: bool) -> LabelledClaim:
        return LabelledClaim(f"r{i}", "d", "c", ("x",), label, cluster=f"r{i}")

    pos, neg = [0.4, 0.6, 0.7, 0.8, 0.9], [0.1, 0.2, 0.3, 0.5, 0.65]
    dev = [(rec(i, True), s) for i, s in enumerate(pos)]
    dev += [(rec(10 + i, False), s) for i, s in enumerate(neg)]
    test = [(rec(20, True), 0.6), (rec(21, False), 0.5)]
    row = measure("j", "judge", "d", dev, test, rng=np.random.default_rng(0), resamples=50)
    # the argmax (0.7) would miss the positive 0.6; the plateau midpoint 0.55 calls both right
    assert row.threshold == pytest.approx(0.55)
    assert row.balanced_accuracy.value == 1.0


@needs_smollm2
def test_consensus_of_offline_and_smollm2_on_a_slice_of_halueval(shared_data: Path, tmp_path: Path):
    (tmp_path / "halueval").symlink_to(shared_data / "halueval")
    result = run_judges(tmp_path, judges=["consensus"], smollm2_limit=2, resamples=20, environ={})
    (row,) = [r for r in result.rows if r.judge == "consensus"]
    # A cell the two members label differently has no majority of two: unscored, not 0.
    assert (row.dev, row.test) == (2, 2) and row.seconds > 0 and row.unscored_test <= 2
    assert result.settings.judge_config["consensus"].startswith("majority(offline,smollm2) ")
    assert "Consensus members used: majority(offline,smollm2)" in render_table(result)

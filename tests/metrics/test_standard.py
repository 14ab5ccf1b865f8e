"""Per-record standard metrics from one judgment; summaries that never average NaN as 0;
thresholds; judges from the config."""

from __future__ import annotations

import math

import pytest

from probeguard.core.io import json_safe
from probeguard.core.pipeline import Context
from probeguard.detectors.config import JudgeConfig
from probeguard.detectors.factory import build_judges
from probeguard.detectors.judges import Consensus, PositionSwap
from probeguard.detectors.local_judge import SmolJudge
from probeguard.detectors.offline_judge import OfflineJudge
from probeguard.metrics.config import Thresholds
from probeguard.metrics.standard import METRICS, score_standard
from probeguard.metrics.summary import summarize_values
from probeguard.metrics.thresholds import check_thresholds, parse_threshold

CONTEXTS = [
    Context("refunds", "Items can be returned within 30 days. Refunds take 5 days."),
    Context("shipping", "Shipping is free on all orders. Returns cost $10."),
]
QUESTION = "How long is the return window?"
JUDGES = build_judges(JudgeConfig())


class CountingJudge(OfflineJudge):
    calls = 0

    def judge(self, claims, contexts):
        CountingJudge.calls += 1
        return super().judge(claims, contexts)


def test_one_judgment_per_record_feeds_every_metric():
    from probeguard.detectors.factory import Judges

    judges = Judges(CountingJudge(), OfflineJudge())
    score = score_standard(
        QUESTION,
        "Items can be returned within 30 days. Refunds take 5 days. "
        "Shipping is free. Returns cost $50.",
        CONTEXTS,
        judges,
        ground_truth="Items can be returned within 30 days.",
    )
    assert CountingJudge.calls == 1
    assert score.judgment.shape == (5, 2) and score.answer_claims == 4
    assert score.value("faithfulness") == pytest.approx(0.75)
    (bad,) = score.faithfulness.unsupported
    assert bad.claim == "Returns cost $50." and bad.contradicting_chunk_id == "shipping"
    assert bad.contradicting_sentence == "Returns cost $10."
    assert score.value("context_recall") == 1.0
    # judge-decided precision: the chunk supporting the ground truth is at rank 1
    assert score.precision_source == "judge" and score.value("context_precision") == 1.0
    assert set(score.metrics) == set(METRICS)


def test_reference_labels_decide_precision_and_rank_matters():
    answer = "Items can be returned within 30 days."
    top = score_standard(QUESTION, answer, CONTEXTS, JUDGES, relevance=[True, False])
    low = score_standard(QUESTION, answer, CONTEXTS, JUDGES, relevance=[False, True])
    assert top.precision_source == "reference" and top.value("context_precision") == 1.0
    assert low.value("context_precision") == 0.5


def test_nothing_to_score_is_nan_with_a_reason_never_zero():
    refusal = score_standard(
        QUESTION,
        "I don't know: the provided context does not contain the answer.",
        CONTEXTS,
        JUDGES,
    )
    assert math.isnan(refusal.value("faithfulness"))
    assert refusal.metrics["faithfulness"].reason
    for name in ("context_recall", "exact_match", "token_f1", "containment"):
        assert math.isnan(refusal.value(name)) and refusal.metrics[name].reason == "no ground truth"
    bare = score_standard(QUESTION, "Items can be returned within 30 days.", [], JUDGES)
    assert math.isnan(bare.value("context_precision")) and bare.precision_source == "none"
    assert math.isnan(bare.value("contextual_relevancy"))


def test_lexical_metrics_are_word_level_against_every_gold():
    s = score_standard(
        QUESTION,
        "30 days",
        CONTEXTS,
        JUDGES,
        ground_truth="thirty days",
        golds=["thirty days", "30 days"],
    )
    assert (s.value("exact_match"), s.value("token_f1"), s.value("containment")) == (1.0, 1.0, 1.0)
    partial = score_standard(QUESTION, "within 30 days", CONTEXTS, JUDGES, golds=["30 days"])
    assert partial.value("token_f1") == pytest.approx(0.8)  # word F1: 2/3 precision, 1 recall


def test_summary_leaves_nan_out_counts_it_unscored_and_facets_by_tag():
    nan = float("nan")
    rows = [
        {"faithfulness": 1.0, "context_recall": nan},
        {"faithfulness": 0.5, "context_recall": 0.0},
        {"faithfulness": nan, "context_recall": nan},
    ]
    tags = [("a",), ("a", "b"), ()]
    s = summarize_values(rows, tags, seed=3)
    f = s["metrics"]["faithfulness"]
    assert f["mean"]["value"] == 0.75 and f["mean"]["n"] == 2 and f["unscored"] == 1
    assert f["mean"]["low"] <= 0.75 <= f["mean"]["high"]
    cr = s["metrics"]["context_recall"]
    assert cr["mean"]["value"] == 0.0 and cr["mean"]["n"] == 1 and cr["unscored"] == 2
    assert math.isnan(s["metrics"]["token_f1"]["mean"]["value"])  # nothing scored: NaN, n=0
    assert s["metrics"]["token_f1"]["unscored"] == 3
    assert list(s["by_tag"]) == ["a", "b"] and s["by_tag"]["a"]["records"] == 2
    assert s["by_tag"]["b"]["metrics"]["faithfulness"]["mean"]["value"] == 0.5
    again = summarize_values(rows, tags, seed=3)  # seeded: reproducible intervals
    assert json_safe(again) == json_safe(s)


def test_thresholds_pass_fail_and_unscored():
    means = {
        "faithfulness": {"value": 0.75, "n": 4},
        "context_precision": {"value": 0.9, "n": 4},
        "context_recall": {"value": None, "n": 0},
    }
    checks = check_thresholds(means, Thresholds())
    assert checks["checks"]["faithfulness"]["status"] == "fail"
    assert checks["checks"]["context_precision"]["status"] == "pass"
    assert checks["checks"]["context_recall"]["status"] == "unscored"
    assert checks["failed"] == ["faithfulness"]  # metrics absent from ``means`` are unscored
    assert checks["unscored"] == ["context_recall", "contextual_relevancy", "answer_relevancy"]
    assert not checks["passed"]
    relaxed = Thresholds(faithfulness=0.7, contextual_relevancy=None, answer_relevancy=None)
    assert check_thresholds(means, relaxed)["passed"]
    assert parse_threshold("faithfulness=0.9") == ("faithfulness", 0.9)
    assert parse_threshold("exact-match=off") == ("exact_match", None)
    for bad in ("faithfulness", "faithfulness=2", "nope=0.5", "faithfulness=high"):
        with pytest.raises(ValueError):
            parse_threshold(bad)


def test_smollm2_is_a_judge_and_a_consensus_member(tmp_path):
    pytest.importorskip("cyllama")
    model = tmp_path / "stand-in.gguf"
    model.write_bytes(b"GGUF")  # the model loads on first use only: nothing is run here
    config = JudgeConfig.model_validate(
        {
            "consensus": {"judges": ["offline", "smollm2"]},
            "smollm2": {"model_path": str(model), "evidence_words": 64},
        }
    )
    judges = build_judges(config)
    assert (
        isinstance(judges.claims, Consensus) and judges.claims.name == "majority(offline,smollm2)"
    )
    smol = judges.claims.judges[1]
    assert isinstance(smol, SmolJudge) and smol.evidence_words == 64
    assert judges.offline_relevance  # a yes/no judge cannot decide relevance
    alone = build_judges(
        JudgeConfig.model_validate({"name": "smollm2", "smollm2": {"model_path": str(model)}})
    )
    assert isinstance(alone.claims, SmolJudge)
    for bad in ({"smollm2": {"evidence_words": 8}}, {"consensus": {"judges": ["offline", "smol"]}}):
        with pytest.raises(ValueError):
            JudgeConfig.model_validate(bad)


def test_judges_from_config_swap_and_consensus():
    swapped = build_judges(JudgeConfig(position_swap=True))
    assert isinstance(swapped.claims, PositionSwap) and swapped.offline_relevance
    both = build_judges(
        JudgeConfig.model_validate(
            {
                "consensus": {"judges": ["offline", "llm"], "rule": "unanimous"},
                "llm": {"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": None},
            }
        )
    )
    assert isinstance(both.claims, Consensus) and both.claims.rule == "unanimous"
    assert not both.offline_relevance  # auto: the LLM decides relevance when it is a judge
    with pytest.raises(ValueError):
        JudgeConfig.model_validate({"consensus": {"judges": ["offline"]}})
    score = score_standard(QUESTION, "Items can be returned within 30 days.", CONTEXTS, swapped)
    assert score.value("faithfulness") == 1.0
    assert "position_swap" in score.judgment.detail


def test_a_failed_pipeline_call_leaves_its_record_unscored(tmp_path):
    # a callable pipeline that fails on demand (the reference pipeline cannot be made to)
    from probeguard.config.models import ScanConfig
    from probeguard.engine.evaluate import evaluate
    from probeguard.pipeline.adapters.callable import CallablePipeline

    def rag(question: str) -> dict:
        if "boom" in question:
            raise RuntimeError("backend down")
        return {
            "answer": "Items can be returned within 30 days.",
            "contexts": [{"text": "Items can be returned within 30 days.", "doc_id": "d"}],
        }

    path = tmp_path / "d.jsonl"
    path.write_text(
        '{"input": "How long is the return window?", "tags": ["ok"]}\n'
        '{"input": "boom?", "tags": ["ok"]}\n'
    )
    config = ScanConfig.model_validate({"runner": {"cache_dir": None, "retries": 0}})
    result = evaluate(config, path, tmp_path / "out", pipeline=CallablePipeline(rag))
    data = result.data
    assert data["errors"] == 1 and data["pipeline"]["errors"] == 1
    ok, failed = data["results"]
    assert ok["metrics"]["faithfulness"]["value"] == 1.0
    assert failed["error"].startswith("pipeline error: RuntimeError")
    assert all(m["value"] is None for m in failed["metrics"].values())
    f = data["summary"]["metrics"]["faithfulness"]
    assert f["mean"]["value"] == 1.0 and f["mean"]["n"] == 1 and f["unscored"] == 1
    assert "ERROR pipeline error: RuntimeError" in result.report_path.read_text()

"""Judged metrics over claim×chunk judgments: faithfulness with findings, context recall,
rank-aware context precision, contextual relevancy, answer relevancy; NaN with a reason
when there is nothing to score; and the offline judge on real reference-pipeline answers."""

from __future__ import annotations

import math

import pytest

from probeguard.core.pipeline import Context
from probeguard.corpus.loaders import load_corpus
from probeguard.corpus.questions import load_questions
from probeguard.detectors.claims import decompose, factual
from probeguard.detectors.judges import Judgment, PositionSwap, Relevance, Verdict, as_contexts
from probeguard.detectors.offline_judge import OfflineJudge
from probeguard.engine.stages import demo_data_dir
from probeguard.metrics.judged import (
    answer_relevancy,
    answer_relevancy_offline,
    context_precision,
    context_recall,
    context_statements,
    contextual_relevancy,
    faithfulness,
    relevance_from_gold,
    relevance_from_judgment,
)
from probeguard.pipeline.config import ReferencePipelineConfig
from probeguard.pipeline.reference import ReferencePipeline
from testkit import REFUND, SPEED

JUDGE = OfflineJudge()
PLANS = Context("plans#0", "Kestrel Plus costs $12 per month. It includes free standard shipping.")
CONTEXTS = [PLANS, REFUND, SPEED]


def test_one_unsupported_claim_among_four_scores_075_and_is_named():
    answer = (
        "Refunds are issued within 5 business days after inspection [3]. Opened "
        "electronics carry a 10% restocking fee [3]. Kestrel Plus costs $12 per month "
        "[1]. Customers may return items within 45 days of delivery [2]."
    )
    claims = factual(decompose(answer))
    assert len(claims) == 4
    result = faithfulness(JUDGE.judge(claims, CONTEXTS))
    assert result.value == 0.75 and result.n == 4 and result.unscored == 0
    assert result.detail["labels"] == {
        "supported": 3,
        "contradicted": 1,
        "unsupported": 0,
        "unscored": 0,
    }
    (bad,) = result.unsupported
    assert bad.claim == "Customers may return items within 45 days of delivery."
    assert bad.label == "contradicted" and bad.contradicting_chunk_id == "refund#0"
    assert bad.contradicting_sentence == (
        "Customers may return items within 30 days of delivery for a full refund."
    )
    assert bad.context_says == bad.contradicting_sentence
    assert "'45 days'" in bad.reason and "'30 days'" in bad.reason
    supported = [f for f in result.findings if f.label == "supported"]
    assert [f.supporting_chunk_id for f in supported] == ["refund#1", "refund#1", "plans#0"]
    assert result.as_dict()["claims"][3]["contradicting_chunk_id"] == "refund#0"


def test_an_unsupported_claim_shows_what_the_closest_context_says():
    claims = [
        "Customers may return items within 30 days of delivery.",
        "Returned items must be shipped back with a prepaid label.",
    ]
    result = faithfulness(JUDGE.judge(claims, CONTEXTS))
    assert result.value == 0.5
    (missing,) = result.unsupported
    assert missing.label == "unsupported" and missing.best_chunk_id == "refund#0"
    assert missing.context_says == (
        "Customers may return items within 30 days of delivery for a full refund."
    )


def test_nothing_to_score_is_nan_with_a_reason_never_zero():
    empty = faithfulness(
        JUDGE.judge(
            factual(decompose("I don't know: the provided context does not contain the answer.")),
            CONTEXTS,
        )
    )
    assert math.isnan(empty.value) and empty.n == 0 and "no factual claim" in empty.reason
    unjudged = faithfulness(JUDGE.judge(["..."], CONTEXTS))
    assert math.isnan(unjudged.value) and unjudged.unscored == 1
    assert "no claim could be judged" in unjudged.reason
    assert unjudged.findings[0].label == "unscored" and unjudged.findings[0].reason
    recall = context_recall(JUDGE.judge([], CONTEXTS))
    assert math.isnan(recall.value) and "no ground-truth claim" in recall.reason
    cp = context_precision([])
    assert math.isnan(cp.value) and cp.reason == "nothing was retrieved"
    cr = contextual_relevancy([])
    assert math.isnan(cr.value) and cr.reason
    ar = answer_relevancy_offline("Is it?", decompose("Yes."))
    assert math.isnan(ar.value) and "no content words" in ar.reason


def test_unscored_claims_leave_the_denominator():
    ctx = as_contexts(["a"])
    rows = (
        (Verdict("supported", 1.0),),
        (Verdict("unscored", reason="judge reply invalid"),),
        (Verdict("unsupported", 0.1),),
    )
    result = faithfulness(Judgment(("x", "y", "z"), ctx, rows, "scripted"))
    assert (result.value, result.n, result.unscored) == (0.5, 2, 1)
    assert result.findings[1].reason == "judge reply invalid"


def test_context_recall_counts_ground_truth_claims_the_contexts_hold():
    truth = factual(
        decompose(
            "Customers may return items within 30 days of delivery. "
            "Refunds are issued within 5 business days. Gift cards cannot "
            "be refunded."
        )
    )
    r = context_recall(JUDGE.judge(truth, CONTEXTS))
    assert r.value == pytest.approx(2 / 3) and r.n == 3
    assert r.detail["missing"] == ["Gift cards cannot be refunded."]
    only_plans = context_recall(JUDGE.judge(truth, [PLANS]))
    assert only_plans.value == 0.0


@pytest.mark.parametrize(
    "flags, value",
    [
        ([True, True, False], 1.0),
        ([True, False, True], (1 + 2 / 3) / 2),
        ([False, True, True], (1 / 2 + 2 / 3) / 2),
        ([False, False, True], 1 / 3),
        ([False, False], 0.0),
    ],
)
def test_context_precision_is_rank_aware(flags, value):
    assert context_precision(flags).value == pytest.approx(value)


def test_context_precision_with_and_without_reference():
    unknown = context_precision([True, None])
    assert math.isnan(unknown.value) and "rank(s) 2" in unknown.reason
    gold = relevance_from_gold(
        [("plans#0", "pol-plans"), ("refund#0", "pol-refund")], {"pol-refund"}
    )
    assert gold == [False, True] and context_precision(gold).value == 0.5
    # without a reference: a chunk is relevant when it supports a claim of the answer
    j = JUDGE.judge(["Customers may return items within 30 days of delivery."], CONTEXTS)
    assert relevance_from_judgment(j) == [False, True, False]
    assert context_precision(relevance_from_judgment(j)).value == 0.5


def test_contextual_relevancy_penalises_bloated_chunks():
    question = "How many days do customers have to return items for a refund?"
    lean = [REFUND.text.split(". ")[0] + "."]
    bloated = [REFUND.text + " Kestrel Plus costs $12 per month. Parental leave is 16 weeks."]
    lean_r = contextual_relevancy([JUDGE.relevance(question, s) for s in context_statements(lean)])
    bloated_r = contextual_relevancy(
        [JUDGE.relevance(question, s) for s in context_statements(bloated)]
    )
    assert lean_r.value == 1.0
    assert bloated_r.value == pytest.approx(1 / 4) and bloated_r.n == 4
    assert bloated_r.detail["per_chunk"] == [0.25]


def test_answer_relevancy_offline_heuristic():
    q = "How many days do customers have to return items?"
    good = answer_relevancy_offline(q, decompose("Customers have 30 days to return items."))
    hedged = answer_relevancy_offline(
        q,
        decompose("Customers have 30 days to return items. I'm not sure, please consult a lawyer."),
    )
    drift = answer_relevancy_offline(
        q, decompose("Customers have 30 days to return items. Kestrel Plus costs $12 per month.")
    )
    refusal = answer_relevancy_offline(
        q, decompose("I don't know: the provided context does not contain the answer.")
    )
    assert good.value == 1.0
    assert hedged.value == pytest.approx(0.75) and hedged.detail["hedges"] == 1
    assert drift.value == pytest.approx(0.75)
    assert drift.detail["drift"] == ["Kestrel Plus costs $12 per month."]
    assert refusal.value == 0.0
    assert answer_relevancy_offline(q, []).value == 0.0


def test_answer_relevancy_judged():
    claims = decompose("Customers have 30 days. Kestrel Plus costs $12. I'm not sure, though.")
    verdicts = [Relevance(True), Relevance(False), Relevance(True)]
    r = answer_relevancy(claims, verdicts)
    assert r.value == pytest.approx(1 / 3) and r.detail["hedges"] == 1
    partial = answer_relevancy(claims[:2], [Relevance(True), Relevance(None, reason="x")])
    assert (partial.value, partial.unscored) == (1.0, 1)
    with pytest.raises(ValueError):
        answer_relevancy(claims, verdicts[:1])


def test_extractive_answers_on_the_demo_are_faithful_to_their_contexts():
    # Real parts: the demo corpus and golden questions, the reference pipeline (hashing
    # embedder, extractive generator). The extractive generator quotes its contexts, so every
    # claim it makes is supported by a retrieved chunk; a refusal makes no claim (NaN, not 0);
    # and the offline judge is blind to the order of the contexts.
    data = demo_data_dir()
    pipeline = ReferencePipeline(
        load_corpus(data / "corpus.jsonl"),
        ReferencePipelineConfig(
            embedder={"name": "hashing", "dim": 1024}, generator={"name": "extractive"}
        ),
    )
    scored = 0
    for q in load_questions(data / "questions.jsonl"):
        out = pipeline.answer(q.question)
        contexts = [Context(c.chunk_id, c.text) for c in out.retrieved]
        claims = factual(decompose(out.answer))
        result = faithfulness(JUDGE.judge(claims, contexts))
        if out.refused:
            assert math.isnan(result.value) and result.n == 0, (q.id, out.answer)
            continue
        assert result.value == 1.0 and result.n >= 1, (q.id, out.answer, result.unsupported)
        assert {f.supporting_chunk_id for f in result.findings} <= {c.chunk_id for c in contexts}
        scored += 1
        if q.id in ("q02", "q06", "q23"):
            swapped = PositionSwap(JUDGE).judge(claims, contexts)
            assert swapped.detail["position_swap"]["disagreements"] == []
    assert scored >= 20


def test_a_judge_without_quotes_still_shows_the_closest_context_sentence():
    # An LLM judge may say "unsupported" and quote nothing: the finding then shows the
    # sentence of any chunk that covers most of the claim's words.
    rows = (
        (
            Verdict("unsupported", 1.0, "plans#0", reason="llm: not stated"),
            Verdict("unsupported", 1.0, "refund#1", reason="llm: no"),
        ),
    )
    j = Judgment(
        ("Refunds are issued within 3 business days.",), as_contexts([PLANS, SPEED]), rows, "llm"
    )
    (finding,) = faithfulness(j).unsupported
    assert finding.best_chunk_id == "refund#1" and finding.reason == "llm: no"
    assert finding.context_says == "Refunds are issued within 5 business days after inspection."

"""Unanswerable probe: seeded near-miss / far-miss generation checked against the corpus
(property-style over seeds, on a hand-made corpus and the demo), and each outcome on purpose
through the real runner — the extractive generator quoting a neighbouring document, a
function that invents, a strict retrieval gate that refuses."""

from __future__ import annotations

import math
import re

import pytest

from probeguard.core.cases import Case
from probeguard.core.documents import Document
from probeguard.core.pipeline import PipelineOutput, RetrievedChunk
from probeguard.core.records import CaseRecord
from probeguard.detectors.fabrication import CorpusIndex, find_quotation
from probeguard.pipeline.adapters.callable import CallablePipeline
from probeguard.pipeline.config import ReferencePipelineConfig
from probeguard.pipeline.reference import ReferencePipeline
from probeguard.probes import JudgeContext, ProbeContext, group_records, make_probe
from probeguard.probes.unanswerable import Unanswerable
from probeguard.probes.unanswerable_questions import (
    COUNTRIES,
    FAR_MISS_QUESTIONS,
    far_miss_questions,
    near_miss_swap,
)
from testkit import (
    HASHING,
    LEAVE_TEXT,
    REFUNDS_TEXT,
    SHIPPING_TEXT,
    SMOLLM2,
    abstain,
    demo_corpus,
    demo_slice,
    golden,
    needs_smollm2,
    probe_context,
    reference_pipeline,
    run_probe,
    timed_out,
)

DOCS = (
    Document(id="refunds", title="Refund Policy", text=REFUNDS_TEXT),
    Document(id="shipping", title="Shipping Policy", text=SHIPPING_TEXT),
    Document(
        id="leave",
        title="Leave Policy",
        text=f"{LEAVE_TEXT} The 2021 leave rules were replaced in 2023.",
    ),
    Document(
        id="plans",
        title="Membership Plans",
        text="Kestrel Plus costs $12 per month. A tent rental costs $22 per day.",
    ),
)

QUESTIONS = (
    golden(
        "q1", "How many days do customers have to return items for a refund?", "30 days", "refunds"
    ),
    golden("q2", "How long does standard delivery to Canada take?", "6 business days", "shipping"),
    golden("q3", "How much does the Kestrel Plus plan cost per month?", "$12 per month", "plans"),
    golden("q4", "Under the 2021 rules, how many days of leave did staff get?", "25 days", "leave"),
    golden("q5", "How much does a tent rental cost per day?", "$22 per day", "plans"),
    golden("q6", "How many weeks of parental leave do employees get?", "16 weeks", "leave"),
    abstain("q7", "Do you ship to Brazil?"),
)

RATE_KEYS = {"value", "low", "high", "n", "method"}


def context(seed: int = 0, docs=DOCS, questions=QUESTIONS) -> ProbeContext:
    return probe_context(docs, questions, seed=seed)


def in_corpus(term: str, docs) -> bool:
    """Independent of CorpusIndex: a plain word-boundary regex over titles and texts."""
    pattern = re.compile(r"\b" + r"\s+".join(map(re.escape, term.lower().split())) + r"\b")
    return any(pattern.search(f"{d.title}\n{d.text}".lower()) for d in docs)


# -- generation ------------------------------------------------------------------------
def test_generation_is_deterministic_and_seeded():
    a = Unanswerable().generate(context(seed=3))
    b = Unanswerable().generate(context(seed=3))
    assert [c.model_dump_json() for c in a] == [c.model_dump_json() for c in b]
    terms = lambda cases: [c.meta.get("term") for c in cases]
    assert any(terms(Unanswerable().generate(context(seed=s))) != terms(a) for s in range(4, 8))


def test_cases_cover_each_kind_with_abstain_expectation():
    cases = Unanswerable(far_miss=3).generate(context())
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids))
    kinds = {}
    for case in cases:
        Case.model_validate(case.model_dump())
        assert case.probe == "unanswerable" and case.meta["role"] == "ask"
        assert case.id == f"unanswerable:{case.meta['group']}:ask"
        assert case.expected.mode == "abstain" and case.variation.is_default()
        kinds.setdefault(case.meta["kind"], []).append(case)
    assert len(kinds["far_miss"]) == 3
    (golden,) = kinds["golden"]  # as given: shares the golden call
    assert golden.question == "Do you ship to Brazil?" and golden.meta["question_id"] == "q7"
    near = {c.meta["question_id"]: c for c in kinds["near_miss"]}
    swaps = {qid: c.meta["swap"] for qid, c in near.items()}
    assert swaps == {
        "q1": "group",
        "q2": "place",
        "q3": "name",
        "q4": "year",
        "q5": "product",
        "q6": "group",
    }
    q2 = near["q2"]
    assert q2.meta["replaced"] == "Canada" and q2.meta["term"] in COUNTRIES
    assert q2.question == QUESTIONS[1].question.replace("Canada", q2.meta["term"])
    assert q2.meta["absence_check"]["absent"] is True
    assert near["q4"].meta["replaced"] == "2021" and re.fullmatch(r"\d{4}", near["q4"].meta["term"])
    assert near["q3"].meta["replaced"] == "Plus"  # the name, not "Kestrel"


@pytest.mark.parametrize("seed", range(25))
def test_every_near_miss_term_is_absent_from_the_corpus(seed):
    for docs, questions in ((DOCS, QUESTIONS), demo_corpus()):
        cases = Unanswerable(near_miss=50).generate(context(seed, docs, questions))
        near = [c for c in cases if c.meta["kind"] == "near_miss"]
        assert near
        for case in near:
            term = case.meta["term"]
            assert not in_corpus(term, docs), (seed, case.question)
            assert term in case.question and case.meta["replaced"] in case.meta["source_question"]
            assert case.meta["absence_check"]["absent"] is True


def test_far_miss_questions_pass_the_overlap_check_and_overlapping_ones_are_dropped():
    docs, questions = demo_corpus()
    index = CorpusIndex(docs)
    kept = far_miss_questions(index, 0.25)
    assert 6 <= len(kept) < len(FAR_MISS_QUESTIONS)  # the check drops some
    for _, question, overlap in kept:
        assert overlap <= 0.25 and index.overlap(question) == overlap
    cases = Unanswerable(far_miss=6).generate(context(0, docs, questions))
    far = [c for c in cases if c.meta["kind"] == "far_miss"]
    assert len(far) == 6 and all(c.meta["corpus_overlap"] <= 0.25 for c in far)
    # a corpus about chemistry makes the tungsten question on-topic: it is not asked
    chem = (
        *DOCS,
        Document(id="chem", title="Elements", text="Tungsten has the chemical symbol W."),
    )
    asked = [c.question for c in Unanswerable(far_miss=50).generate(context(docs=chem))]
    assert "What is the chemical symbol for tungsten?" not in asked
    assert "What is the chemical symbol for tungsten?" in [
        c.question for c in Unanswerable(far_miss=50).generate(context())
    ]


def test_settings_limit_and_validate():
    cases = Unanswerable(near_miss=2, far_miss=0, golden=False).generate(context())
    assert [c.meta["kind"] for c in cases] == ["near_miss", "near_miss"]
    assert Unanswerable(near_miss=0, far_miss=0, golden=False).generate(context()) == []
    with pytest.raises(ValueError, match="near_miss"):
        Unanswerable(near_miss=-1)
    with pytest.raises(ValueError, match="max_overlap"):
        Unanswerable(max_overlap=2)
    probe = make_probe("unanswerable", {"far_miss": 2})
    assert probe.config()["far_miss"] == 2 and probe.requires == frozenset()
    assert Unanswerable.overlap_weight == 0.0


def test_near_miss_swap_keeps_articles_and_plurals():
    index = CorpusIndex(DOCS)
    q = Case(id="x", question="What do two tents cost in the United Kingdom?")
    swap = near_miss_swap(context(), q, index)
    assert swap is not None and swap.kind == "place" and swap.original == "United Kingdom"
    assert "the the " not in swap.apply(q.question)
    q = Case(id="y", question="How much do two tents cost?")
    swap = near_miss_swap(context(), q, index)
    assert swap.kind == "product" and swap.term.endswith("s") and swap.original == "tents"
    assert near_miss_swap(context(), Case(id="z", question="Why?"), index) is None


# -- the detector ----------------------------------------------------------------------
def test_quotation_verbatim_near_verbatim_and_invention():
    index = CorpusIndex(DOCS)
    chunk = RetrievedChunk(chunk_id="s#0", doc_id="shipping", rank=1, text=DOCS[1].text)
    q = find_quotation("Shipping to Mexico costs $25 per order. [1]", [chunk], index)
    assert q.quoted and q.verbatim and q.doc_ids == ("shipping",)
    q = find_quotation("Parental leave is 16 weeks at full pay.", [chunk], index)
    assert q.quoted and q.doc_ids == ("leave",)  # corpus-wide, not retrieved
    # near-verbatim re-wording of a sentence of a retrieved chunk's document (the chunk
    # itself holds another sentence); outside the neighbourhood it is not a quotation
    leave = RetrievedChunk(
        chunk_id="l#0",
        doc_id="leave",
        rank=1,
        text="Employees receive 25 days of paid annual leave each calendar year.",
    )
    q = find_quotation("Parental leave lasts 16 weeks at full pay [1].", [leave], index)
    assert q.quoted and not q.verbatim and q.doc_ids == ("leave",)
    assert not find_quotation("Parental leave lasts 16 weeks at full pay.", [chunk], index).quoted
    q = find_quotation("Delivery to Peru takes 9 days and costs $40.", [chunk], index)
    assert not q.quoted and q.unquoted
    mixed = find_quotation(
        "Shipping to Mexico costs $25 per order. [1] Peru is $40.", [chunk], index
    )
    assert not mixed.quoted  # a quote plus an invention


# -- outcomes through the real runner --------------------------------------------------
def _run(pipeline, probe, ctx):
    return run_probe(pipeline, probe, ctx, by_group=True)


def _reference(**retriever) -> ReferencePipeline:
    return reference_pipeline(DOCS, retriever=retriever or None)


def test_extractive_generator_fabricates_by_quoting_a_neighbouring_document():
    ctx = context(questions=QUESTIONS[1:3])  # delivery to Canada, Kestrel Plus
    summary, verdicts = _run(_reference(), Unanswerable(far_miss=0), ctx)
    near = verdicts["near:q2"]
    assert near.failed is True and near.evidence["outcome"] == "fabricated"
    assert near.evidence["fabrication"] == "quotation" and near.evidence["verbatim"]
    assert near.evidence["quoted_doc_ids"] == ["shipping"]  # the Canada sentence, served
    assert summary["per_kind"]["near_miss"]["quotation_share"]["value"] == 1.0
    assert summary["invention_rate"]["value"] == 0.0


def test_a_pipeline_that_invents_is_caught_as_invention():
    def invent(question: str) -> str:
        return "Delivery there takes 9 business days and costs $40 [1]."

    ctx = context(questions=QUESTIONS[1:2])
    summary, verdicts = _run(CallablePipeline(invent, version="1"), Unanswerable(far_miss=2), ctx)
    assert all(v.failed and v.evidence["fabrication"] == "invention" for v in verdicts.values())
    assert summary["invention_rate"]["value"] == 1.0 and summary["fabrication_rate"]["n"] == 3
    assert summary["quotation_share"]["value"] == 0.0
    assert summary["negating_share"]["value"] == 0.0


def test_a_denial_is_fabricated_but_flagged_as_negating():
    probe = Unanswerable(far_miss=0, golden=False)
    (case,) = probe.generate(context(questions=QUESTIONS[1:2]))
    record = CaseRecord(
        case=case, call_key="k", output=PipelineOutput(answer="We don't deliver there.")
    )
    verdict = probe.judge(case.meta["group"], {"ask": record}, JudgeContext(probe=context()))
    assert verdict.failed is True and verdict.evidence["negates"] is True
    assert probe.summarize([verdict])["negating_share"]["value"] == 1.0


def test_a_strict_gate_refuses_everything():
    ctx = context()
    summary, verdicts = _run(_reference(name="dense", min_score=0.99), Unanswerable(), ctx)
    assert all(v.failed is False and v.evidence["outcome"] == "refused" for v in verdicts.values())
    assert summary["refusal_rate"]["value"] == 1.0 and summary["fabrication_rate"]["value"] == 0.0
    assert summary["failure_rate"]["value"] == 0.0
    assert {k for k, s in summary["per_kind"].items() if s["refusal_rate"]["n"]} == {
        "near_miss",
        "far_miss",
        "golden",
    }


def test_errors_are_unscored_and_the_summary_has_intervals_everywhere():
    probe = Unanswerable(far_miss=1)
    cases = probe.generate(context(questions=QUESTIONS[1:2]))
    records = [
        timed_out(cases[0]),
        CaseRecord(case=cases[1], call_key="k", output=PipelineOutput(answer="", refused=True)),
    ]
    jctx = JudgeContext(probe=context())
    verdicts = [probe.judge(g, r, jctx) for g, r in group_records(records, probe.name).items()]
    assert verdicts[0].failed is None and "TimeoutError" in verdicts[0].evidence["unscored"]
    assert verdicts[1].failed is False and verdicts[1].evidence["outcome"] == "refused"
    summary = probe.summarize(verdicts)
    assert summary["groups"] == 2 and summary["unscored"] == 1
    rates = [
        summary[k]
        for k in (
            "failure_rate",
            "fabrication_rate",
            "refusal_rate",
            "quotation_rate",
            "invention_rate",
            "quotation_share",
            "negating_share",
        )
    ]
    rates += [
        r for kind in summary["per_kind"].values() for r in kind.values() if isinstance(r, dict)
    ]
    assert all(set(r) == RATE_KEYS for r in rates)
    golden = summary["per_kind"]["golden"]["fabrication_rate"]
    assert golden["n"] == 0 and math.isnan(golden["value"])  # undefined, not zero


def test_demo_corpus_runs_each_kind():
    docs, questions = demo_corpus()
    pipeline = ReferencePipeline(docs, ReferencePipelineConfig(embedder=HASHING))
    ctx = probe_context(docs, questions, top_k=5, capabilities=pipeline.capabilities)
    summary, _ = _run(pipeline, Unanswerable(), ctx)
    per_kind = summary["per_kind"]
    assert (
        per_kind["near_miss"]["fabrication_rate"]["n"],
        per_kind["far_miss"]["groups"],
        per_kind["golden"]["groups"],
    ) == (12, 6, 3)
    assert 0 < summary["fabrication_rate"]["value"] < 1


@needs_smollm2
def test_a_small_llm_invents_where_the_extractive_generator_quotes():
    # SmolLM2-135M answers near-miss questions with invented facts ("The warranty on a
    # kayak is 2 years."; "... lies on the River Vash."): measured on the demo, 7 of 7
    # unanswerable questions fabricated, all inventions. ~15 s on 1 thread.
    docs, _, ctx = demo_slice(None, ("q19",), top_k=3)  # the warranty on a tent
    probe = Unanswerable(far_miss=0, golden=False)

    def pipeline(generator):
        return ReferencePipeline(
            docs, ReferencePipelineConfig(embedder=HASHING, top_k=3, generator=generator)
        )

    llm, _ = _run(pipeline(SMOLLM2), probe, ctx)
    extractive, _ = _run(pipeline({"name": "extractive"}), probe, ctx)
    assert llm["fabrication_rate"]["n"] == 1 and llm["invention_rate"]["value"] == 1.0
    assert extractive["invention_rate"]["value"] == 0.0  # it can only quote

"""Retrieval gap: paraphrase cases, rank deltas, and a real lexical-mismatch weakness (BM25)
that a dense MiniLM retriever does not share, found through the runner."""

from __future__ import annotations

import math

import pytest

from probeguard.core.cases import Case, Expected
from probeguard.core.documents import Document
from probeguard.core.pipeline import Capability, PipelineOutput, RetrievedChunk, Variation
from probeguard.core.records import CaseError, CaseRecord
from probeguard.nlp.paraphrase import EVIDENCE_WORDING, KINDS, TARGETED
from probeguard.pipeline.config import ReferencePipelineConfig
from probeguard.pipeline.reference import ReferencePipeline
from probeguard.probes.base import PROBES, JudgeContext, ProbeContext, group_records
from probeguard.probes.retrieval_gap import GAP_KINDS, OUTCOMES, SEMANTIC, RetrievalGap
from probeguard.runner.executor import Runner, RunnerConfig

# Short policy texts whose questions use the documents' own wording: the synonym and jargon
# paraphrases swap that wording for other words (customer → client, refund → reimbursement),
# a lexical mismatch that BM25 cannot bridge and a sentence embedding can.
DOCS = [
    (
        "refunds",
        "A customer may return an item within 30 days to get a refund. The refund goes "
        "back to the card used at checkout.",
    ),
    (
        "staff-discount",
        "Every employee may buy store goods at a 25% discount. The discount does "
        "not apply to gift cards.",
    ),
    ("shipping", "We ship every order within 2 working days. Heavy parcels ship by road freight."),
    (
        "deletion",
        "If you ask us to delete your account, we delete it within 45 days. Backups "
        "expire after that.",
    ),
    (
        "late-fee",
        "A late fee of $8 per day is charged when rented gear comes back after the due date.",
    ),
    (
        "leave",
        "Each employee gets 16 weeks of paid parental leave. Leave can start up to 4 weeks "
        "before the birth.",
    ),
    (
        "repairs",
        "We repair a broken tent for free during the first 2 years. After that a repair costs $40.",
    ),
    ("support", "You can phone customer support on 555-0147 from 9 am to 5 pm on weekdays."),
    ("membership", "A membership costs $12 per month and can be cancelled at any time."),
    ("travel", "Staff who travel for work may claim up to $60 per night for a hotel."),
    ("price-match", "If an item you buy drops in price within 14 days, we refund the difference."),
    (
        "security",
        "Report a suspicious email to the security team by forwarding it to report@example.com.",
    ),
]
QUESTIONS = [
    ("refunds", "How many days does a customer have to return an item for a refund?", "30 days"),
    ("staff-discount", "What discount does an employee get to buy goods?", "25%"),
    ("shipping", "How many working days does it take to ship an order?", "2 working days"),
    ("deletion", "How long does it take to delete my account?", "45 days"),
    ("late-fee", "What is the late fee for rented gear?", "$8 per day"),
    ("leave", "How many weeks of paid parental leave does an employee get?", "16 weeks"),
    ("repairs", "How long do you repair a broken tent for free?", "2 years"),
    ("support", "What number do I phone to reach customer support?", "555-0147"),
    ("membership", "How much does a membership cost per month?", "$12 per month"),
    ("travel", "How much can staff claim for a hotel when they travel for work?", "$60 per night"),
    (
        "price-match",
        "How many days do I have to get a refund of the difference if an item I buy "
        "drops in price?",
        "14 days",
    ),
    ("security", "Where do I report a suspicious email?", "report@example.com"),
]
TOP_K = 2


def corpus() -> tuple[list[Document], list[Case]]:
    docs = [Document(id=d, text=t) for d, t in DOCS]
    questions = [
        Case(id=f"q{i:02d}", question=q, expected=Expected(answers=(a,), evidence_doc_ids=(d,)))
        for i, (d, q, a) in enumerate(QUESTIONS)
    ]
    questions.append(
        Case(id="abstain", question="What is the CEO's salary?", expected=Expected(mode="abstain"))
    )
    return docs, questions


def context(seed: int = 0) -> ProbeContext:
    docs, questions = corpus()
    return ProbeContext(documents=tuple(docs), questions=tuple(questions), seed=seed, top_k=TOP_K)


def run_probe(retriever: dict, embedder: dict | None = None):
    docs, _ = corpus()
    config = {
        "retriever": retriever,
        "top_k": TOP_K,
        "chunker": {"name": "tokens", "size": 128, "overlap": 32},
    }
    if embedder is not None:
        config["embedder"] = embedder
    pipeline = ReferencePipeline(docs, ReferencePipelineConfig(**config))
    ctx = context()
    probe = RetrievalGap()
    result = Runner(pipeline, RunnerConfig(concurrency=2)).run(probe.generate(ctx))
    groups = group_records(result.records, probe.name)
    verdicts = [probe.judge(g, recs, JudgeContext(ctx)) for g, recs in groups.items()]
    return verdicts, probe.summarize(verdicts)


# -- settings and generate --------------------------------------------------------------


def test_settings():
    assert PROBES["retrieval_gap"] is RetrievalGap
    assert RetrievalGap.requires == frozenset() and RetrievalGap.overlap_weight == 0.15
    probe = RetrievalGap(rank_delta_threshold=2, kinds=["synonym"])
    assert probe.config() == {
        "name": "retrieval_gap",
        "rank_delta_threshold": 2.0,
        "kinds": ["synonym"],
        "targeted_terms": 3,
        "recover": True,
        "semantic_mode": "dense",
        "bootstrap_seed": 0,
    }
    assert RetrievalGap().kinds == GAP_KINDS == (*KINDS, TARGETED)
    with pytest.raises(ValueError, match="unknown paraphrase kind"):
        RetrievalGap(kinds=("synonym", "llm"))
    with pytest.raises(ValueError, match="at least one"):
        RetrievalGap(kinds=())
    with pytest.raises(ValueError, match="distinct"):
        RetrievalGap(kinds=("synonym", "synonym"))
    with pytest.raises(ValueError, match="targeted_terms"):
        RetrievalGap(targeted_terms=-1)
    with pytest.raises(ValueError, match="semantic_mode"):
        RetrievalGap(semantic_mode=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="recover"):
        RetrievalGap(recover="yes")  # type: ignore[arg-type]


def test_generate_is_deterministic_and_valid():
    first = RetrievalGap().generate(context())
    second = RetrievalGap().generate(context())
    assert [c.model_dump_json() for c in first] == [c.model_dump_json() for c in second]
    reseeded = RetrievalGap().generate(context(seed=12345))
    assert [c.question for c in reseeded] != [c.question for c in first]  # seeded choices

    ids = [c.id for c in first]
    assert len(ids) == len(set(ids))
    groups = {c.meta["group"] for c in first}
    assert groups == {f"q{i:02d}" for i in range(len(QUESTIONS))}  # the abstention is left out
    for case in first:
        assert Case.model_validate_json(case.model_dump_json()) == case
        assert case.probe == "retrieval_gap" and case.variation == Variation()
        assert case.id == f"retrieval_gap:{case.meta['group']}:{case.meta['role']}"
        assert case.meta["kind"] == case.meta["role"]
        if case.meta["role"] != "original":
            assert case.meta["role"] in (*GAP_KINDS, EVIDENCE_WORDING)
            assert case.question != case.meta["original"]
    originals = [c for c in first if c.meta["role"] == "original"]
    assert [c.question for c in originals] == [q for _, q, _ in QUESTIONS]
    # every kind changes at least one question of this corpus
    assert {c.meta["kind"] for c in first} == {"original", *GAP_KINDS}


def test_kinds_setting_limits_the_variants():
    cases = RetrievalGap(kinds=("keywords",)).generate(context())
    assert {c.meta["role"] for c in cases} == {"original", "keywords"}


# -- judge on hand-made records ---------------------------------------------------------


def _output(*doc_ids: str) -> PipelineOutput:
    return PipelineOutput(
        answer="a",
        retrieved=[
            RetrievedChunk(chunk_id=f"{d}#0-1", doc_id=d, text="t", rank=i + 1)
            for i, d in enumerate(doc_ids)
        ],
    )


def _records(outputs: dict[str, PipelineOutput | None]) -> dict[str, CaseRecord]:
    gold = Expected(answers=("x",), evidence_doc_ids=("gold",))
    records = {}
    for role, out in outputs.items():
        case = Case(
            id=f"retrieval_gap:g:{role}",
            question=f"question {role}",
            probe="retrieval_gap",
            expected=gold,
            meta={"group": "g", "role": role, "kind": role},
        )
        error = None if out is not None else CaseError(type="PipelineCallError", message="boom")
        records[role] = CaseRecord(case=case, call_key=role, output=out, error=error)
    return records


def _judge(outputs, threshold: float = 1.0):
    ctx = JudgeContext(ProbeContext(documents=(), questions=(), top_k=3))
    return RetrievalGap(rank_delta_threshold=threshold).judge("g", _records(outputs), ctx)


def test_rank_deltas_and_the_penalty_rank():
    verdict = _judge(
        {
            "original": _output("gold", "b"),
            "synonym": _output("b", "gold"),
            "jargon": _output("b", "c", "d"),
        }
    )
    rows = {r["kind"]: r for r in verdict.evidence["variants"]}
    assert rows["synonym"]["rank"] == 2 and rows["synonym"]["delta"] == 1
    assert rows["jargon"]["rank"] == 4 and rows["jargon"]["left_top_k"]  # top_k + 1 penalty
    assert verdict.evidence["mean_delta"] == 2.0 and verdict.failed is True
    assert verdict.evidence["lost_by"] == ["jargon"]


def test_small_mean_delta_within_top_k_is_no_gap():
    verdict = _judge(
        {"original": _output("gold"), "synonym": _output("b", "gold"), "keywords": _output("gold")}
    )
    assert verdict.failed is False and verdict.evidence["mean_delta"] == 0.5
    assert (
        _judge({"original": _output("gold"), "synonym": _output("b", "gold")}, threshold=0.5).failed
        is True
    )


def test_a_variant_that_retrieves_nothing_lost_the_gold():
    verdict = _judge({"original": _output("gold"), "synonym": _output()})
    assert verdict.failed is True and verdict.evidence["variants"][0]["rank"] == 4


def test_unscored_groups_say_why():
    missed = _judge({"original": _output("a", "b"), "synonym": _output("c")})
    assert missed.failed is None
    assert missed.evidence["outcome"] == "original_miss_unrecovered"
    assert missed.evidence["unscored"].startswith("gold evidence not retrieved for the original")
    assert "no rewording recovers it" in missed.evidence["unscored"]
    errored = _judge({"original": _output("gold"), "synonym": None})
    assert errored.failed is None and "PipelineCallError" in errored.evidence["unscored"]
    broken = _judge({"original": None, "synonym": _output("gold")})
    assert broken.failed is None and "the original call errored" in broken.evidence["unscored"]
    silent = _judge({"original": PipelineOutput(answer="a"), "synonym": PipelineOutput(answer="b")})
    assert silent.failed is None and "no retrieved contexts" in silent.evidence["unscored"]
    alone = _judge({"original": _output("gold")})
    assert alone.failed is None and "no paraphrase" in alone.evidence["unscored"]


# -- the weakness, through the real runner ----------------------------------------------


@pytest.fixture(scope="module")
def bm25():
    return run_probe({"name": "bm25"})


def test_bm25_has_paraphrase_gaps_that_dense_and_hybrid_retrieval_close(bm25):
    weak_verdicts, weak = bm25
    _, dense = run_probe({"name": "dense"}, {"name": "minilm"})
    _, hybrid = run_probe({"name": "hybrid"}, {"name": "minilm"})
    assert weak["failure_rate"]["n"] == dense["failure_rate"]["n"] == len(QUESTIONS)
    assert weak["failure_rate"]["value"] > dense["failure_rate"]["value"]
    assert weak["failure_rate"]["value"] > hybrid["failure_rate"]["value"]
    assert weak["failure_rate"]["value"] >= 0.25
    assert weak["mean_rank_delta"]["value"] > dense["mean_rank_delta"]["value"]
    # The gaps come from the lexical kinds, not from rewording that keeps the words.
    for kind in ("synonym", "jargon"):
        assert weak["kind_gap_rates"][kind]["value"] > dense["kind_gap_rates"][kind]["value"]
    assert weak["kind_gap_rates"]["keywords"]["value"] == 0.0
    failed = next(v for v in weak_verdicts if v.failed)
    assert failed.evidence["reasons"] and failed.evidence["original_rank"] <= TOP_K
    assert all({"text", "kind", "rank", "delta"} <= set(r) for r in failed.evidence["variants"])


def test_summary_shapes(bm25):
    _, summary = bm25
    assert summary["groups"] == len(QUESTIONS) and summary["unscored"] == 0
    assert summary["mean_rank_delta"]["method"] == "bootstrap"
    assert set(summary["kind_gap_rates"]) == set(GAP_KINDS) == set(summary["kind_mean_rank_delta"])
    assert set(summary["kind_moved_rates"]) == set(GAP_KINDS)
    assert list(summary["outcomes"]) == list(OUTCOMES)
    assert sum(summary["outcomes"].values()) == len(QUESTIONS)
    assert summary["original_misses"]["n"] == len(QUESTIONS)
    for estimate in summary["kind_gap_rates"].values():
        assert estimate["method"] == "wilson" and 0 < estimate["n"] <= len(QUESTIONS)
    empty = RetrievalGap().summarize([])
    assert empty["groups"] == 0 and math.isnan(empty["mean_rank_delta"]["value"])


# -- original misses, errored rewordings, mechanism ---------------------------------------


def test_an_original_miss_that_a_rewording_recovers_counts_against_the_retriever():
    probe = RetrievalGap()
    verdict = _judge(
        {
            "original": _output("a", "b"),
            "synonym": _output("c"),
            "evidence_wording": _output("b", "gold"),
        }
    )
    evidence = probe.evidence_of(verdict)
    assert verdict.failed is True and evidence.outcome == "original_miss"
    assert evidence.original_rank is None and evidence.recovered_by == ["evidence_wording"]
    assert "retrieved at rank 2 under the evidence_wording rewording" in evidence.reasons[0]
    assert probe.failing_roles(evidence, ("original", "synonym", "evidence_wording")) == (
        "original",
    )
    assert probe.failure_mechanism(evidence, "retriever") == "lexical_retrieval_miss"
    assert probe.failure_mechanism(evidence, "generator") is None


def test_an_original_miss_the_semantic_retriever_recovers_is_lexical_whatever_the_swaps_say():
    """The surgeon's swaps replace only the original (the group then fails as a gap), so
    they blame e.g. a generator that refuses with the evidence: the probe's own
    counterfactual names the mechanism. A rewording-only recovery still defers to them."""
    probe = RetrievalGap()
    verdict = _judge(
        {"original": _output("a", "b"), "synonym": _output("c"), "semantic": _output("gold")}
    )
    evidence = probe.evidence_of(verdict)
    assert evidence.outcome == "original_miss" and evidence.recovered_by == ["semantic"]
    assert probe.failure_mechanism(evidence, "generator") == "lexical_retrieval_miss"
    reworded = _judge({"original": _output("a"), "evidence_wording": _output("gold")})
    assert probe.failure_mechanism(probe.evidence_of(reworded), "generator") is None


def test_the_semantic_control_says_whether_a_wording_gap_is_lexical():
    """A gap of a pipeline whose own retrieval ranks as the semantic role does (it already
    retrieves by meaning) is not lexical, whoever the surgeon blamed; one whose retrieval
    ranks otherwise is, even when a whole-document swap happened to repair it."""
    probe = RetrievalGap()
    dense = probe.evidence_of(
        _judge(
            {
                "original": _output("gold", "b"),
                "targeted": _output("b", "c"),
                "semantic": _output("gold", "b"),
            }
        )
    )
    assert dense.outcome == "gap" and dense.semantic_differs is False
    assert probe.failure_mechanism(dense, "retriever") is None
    lexical = probe.evidence_of(
        _judge(
            {
                "original": _output("gold", "b"),
                "targeted": _output("b", "c"),
                "semantic": _output("b", "gold"),
            }
        )
    )
    assert lexical.semantic_differs is True
    assert probe.failure_mechanism(lexical, "chunker") == "lexical_retrieval_miss"


def test_a_gap_names_the_lexical_mechanism_and_a_held_group_none():
    probe = RetrievalGap()
    gap = probe.evidence_of(_judge({"original": _output("gold"), "targeted": _output("b", "c")}))
    assert (
        gap.outcome == "gap"
        and probe.failure_mechanism(gap, "retriever") == "lexical_retrieval_miss"
    )
    held = probe.evidence_of(_judge({"original": _output("gold"), "targeted": _output("gold")}))
    assert held.outcome == "held" and probe.failure_mechanism(held, "retriever") is None


def test_an_original_that_retrieves_nothing_is_a_miss_when_the_pipeline_reports_contexts():
    # BM25 retrieves nothing for a question with no word in common with the corpus.
    verdict = _judge({"original": PipelineOutput(answer="a"), "semantic": _output("gold")})
    assert verdict.failed is True and verdict.evidence["outcome"] == "original_miss"
    assert verdict.evidence["recovered_by"] == ["semantic"]
    assert "by dense retrieval of the question as written" in verdict.evidence["reasons"][0]


def test_the_evidence_wording_rewording_does_not_count_in_a_gap():
    verdict = _judge(
        {
            "original": _output("b", "gold"),
            "synonym": _output("b", "gold"),
            "evidence_wording": _output("gold"),
        }
    )
    assert verdict.failed is False
    assert [r["kind"] for r in verdict.evidence["variants"]] == ["synonym"]


def test_errored_rewordings_follow_the_one_rule():
    # Every role can decide, so an errored call unscores the group whatever the others show
    # (a lost rewording included): whether a group is scored never depends on its outcome.
    for outputs in (
        {"original": _output("gold"), "synonym": _output("b"), "jargon": None},
        {"original": _output("gold"), "synonym": _output("gold"), "jargon": None},
        {"original": _output("a"), "synonym": _output("gold"), "jargon": None},
        {"original": _output("a"), "synonym": _output("b"), "jargon": None},
    ):
        verdict = _judge(outputs)
        assert verdict.failed is None
        assert "the jargon call errored" in verdict.evidence["unscored"]


def test_summary_counts_outcomes_and_per_kind_moves():
    probe = RetrievalGap(kinds=("synonym", "targeted"))
    verdicts = [
        _judge({"original": _output("gold"), "synonym": _output("gold"), "targeted": _output("b")}),
        _judge(
            {
                "original": _output("gold"),
                "synonym": _output("b", "gold"),
                "targeted": _output("gold"),
            }
        ),
        _judge({"original": _output("a"), "synonym": _output("gold")}),
        _judge({"original": _output("a"), "synonym": _output("b")}),
    ]
    summary = probe.summarize(verdicts)
    assert summary.outcomes == {
        "held": 1,
        "gap": 1,
        "original_miss": 1,
        "original_miss_unrecovered": 1,
    }
    assert (summary.failure_rate.value, summary.failure_rate.n) == (2 / 3, 3)
    assert (summary.original_misses.value, summary.original_misses.n) == (0.5, 4)
    assert (summary.original_miss_recovered.value, summary.original_miss_recovered.n) == (0.5, 2)
    assert (summary.kind_moved_rates["synonym"].value, summary.kind_moved_rates["synonym"].n) == (
        0.5,
        2,
    )
    assert summary.kind_gap_rates["targeted"].value == 0.5
    assert summary.kind_mean_rank_delta["targeted"].value == 1.5  # (4 - 1) and (1 - 1)


def test_targeted_rewording_aims_at_the_words_the_evidence_shares():
    cases = RetrievalGap(kinds=("targeted",), recover=False).generate(context())
    targeted_cases = [c for c in cases if c.meta["role"] == "targeted"]
    assert targeted_cases
    docs = dict(DOCS)
    for case in targeted_cases:
        assert case.meta["anchors"]
        gold_text = docs[case.expected.evidence_doc_ids[0]].lower()
        # at least one anchor is gone, and the words that replaced it are not in the evidence
        assert any(a not in case.question.lower().split() for a in case.meta["anchors"])
        assert all(a in gold_text for a in case.meta["anchors"])


# -- synonym-worded questions: original misses, recovered by the semantic retriever --------

# The same facts asked in other words than the documents use (no word of a document's key
# terms): BM25 misses several as written; the dense MiniLM retriever finds them.
SYNONYM_WORDED = [
    ("refunds", "How long has a shopper got to send back a purchase and be repaid?"),
    ("staff-discount", "What reduction do workers receive on merchandise?"),
    ("shipping", "How quickly is a parcel dispatched?"),
    ("deletion", "How soon is my profile erased once I request it?"),
    ("late-fee", "What penalty applies to overdue equipment hire?"),
    ("leave", "How long is the time off for new parents?"),
    ("repairs", "Is fixing damaged camping shelters free?"),
    ("support", "Which telephone line reaches the help desk?"),
    ("membership", "What is the monthly subscription price?"),
    ("travel", "What lodging allowance do employees get on business trips?"),
    ("price-match", "If something I purchased gets cheaper, am I reimbursed?"),
    ("security", "Where should I forward a phishing message?"),
]


def run_synonym_worded(retriever: dict) -> tuple[list, object]:
    docs, _ = corpus()
    questions = [
        Case(id=f"s{i:02d}", question=q, expected=Expected(answers=("x",), evidence_doc_ids=(d,)))
        for i, (d, q) in enumerate(SYNONYM_WORDED)
    ]
    config = ReferencePipelineConfig(
        retriever=retriever,
        embedder={"name": "minilm"},
        top_k=TOP_K,
        chunker={"name": "tokens", "size": 128, "overlap": 32},
    )
    pipeline = ReferencePipeline(docs, config)
    ctx = ProbeContext(
        documents=tuple(docs),
        questions=tuple(questions),
        top_k=TOP_K,
        capabilities=pipeline.capabilities,
    )
    probe = RetrievalGap()
    cases = probe.generate(ctx)
    result = Runner(pipeline, RunnerConfig(concurrency=2)).run(cases)
    groups = group_records(result.records, probe.name)
    verdicts = [probe.judge(g, recs, JudgeContext(ctx)) for g, recs in groups.items()]
    return cases, probe.summarize(verdicts)


def test_the_semantic_role_is_asked_only_of_a_pipeline_that_switches_retrieval():
    without = RetrievalGap().generate(context())
    assert SEMANTIC not in {c.meta["role"] for c in without}
    docs, questions = corpus()
    ctx = ProbeContext(
        documents=tuple(docs),
        questions=tuple(questions),
        top_k=TOP_K,
        capabilities=frozenset({Capability.RETRIEVAL}),
    )
    semantic = [c for c in RetrievalGap().generate(ctx) if c.meta["role"] == SEMANTIC]
    assert len(semantic) == len(QUESTIONS)
    assert all(c.variation.retrieval == {"mode": "dense"} for c in semantic)
    assert all(c.question == c.meta["original"] for c in semantic)
    assert not [
        c for c in RetrievalGap(semantic_mode=None).generate(ctx) if c.meta["role"] == SEMANTIC
    ]
    assert not [c for c in RetrievalGap(recover=False).generate(ctx) if c.meta["role"] == SEMANTIC]


def test_synonym_worded_questions_separate_bm25_from_dense():
    _, weak = run_synonym_worded({"name": "bm25"})
    _, dense = run_synonym_worded({"name": "dense"})
    assert weak.failure_rate.n == dense.failure_rate.n == len(SYNONYM_WORDED)
    assert weak.outcomes["original_miss"] >= len(SYNONYM_WORDED) // 2  # found by meaning only
    assert weak.failure_rate.low > dense.failure_rate.high  # the intervals separate
    assert weak.original_misses.value > dense.original_misses.value

"""Layered scoring: truth tables of each layer on hand-made outputs, and the rule that a
layer that does not apply is None — never counted as a pass or a failure."""

from __future__ import annotations

import pytest

from probeguard.core.cases import Expected
from probeguard.core.documents import Document
from probeguard.core.pipeline import PipelineOutput, RetrievedChunk
from probeguard.metrics.layers import (
    LAYERS,
    answer_layer,
    citation_layer,
    cited_doc_ids,
    is_refusal,
    retrieval_layer,
    score_layers,
    uncitable_doc_ids,
)
from probeguard.models.prompts import REFUSAL_TEXT


def chunk(doc: str, rank: int, i: int = 0) -> RetrievedChunk:
    return RetrievedChunk(chunk_id=f"{doc}#{i}", doc_id=doc, text=f"text of {doc}", rank=rank)


def output(answer: str, docs=("a", "b", "c"), cited=(), refused=False) -> PipelineOutput:
    return PipelineOutput(
        answer=answer,
        refused=refused,
        retrieved=[chunk(d, r) for r, d in enumerate(docs, start=1)],
        cited_chunk_ids=[f"{d}#0" for d in cited],
    )


TRUE_FACT = Expected(answers=("30 days",), evidence_doc_ids=("a",))


def test_layer_names():
    assert LAYERS == ("retrieval", "answer", "abstention", "citation")


# -- retrieval ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "ranked, evidence, k, want",
    [
        (["a", "b"], ["a"], 1, True),
        (["b", "a"], ["a"], 1, False),  # rank 2 > k
        (["b", "a"], ["a"], 2, True),
        (["b", "b", "a"], ["a"], 2, True),  # chunks of one document count once
        (["b", "c"], ["a"], 5, False),
        (["b", "c"], ["x", "c"], 5, True),  # any evidence document is a hit
        ([], ["a"], 5, None),  # nothing reported: not measurable
        (["a"], [], 5, None),  # no evidence: not applicable
    ],
)
def test_retrieval_hit_at_k(ranked, evidence, k, want):
    assert retrieval_layer(ranked, evidence, k)[0] is want


def test_retrieval_detail_reports_rank_and_all_evidence():
    ok, info = retrieval_layer(["b", "a", "c"], ["a", "c"], 2)
    assert ok and info == {"evidence_rank": 2, "k": 2, "all_evidence": False}


# -- answer ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "answer, expected, refused, want",
    [
        ("Within 30 days.", Expected(answers=("30 days", "thirty days")), False, True),
        ("Within thirty days.", Expected(answers=("30 days", "thirty days")), False, True),
        ("Within 14 days.", Expected(answers=("30 days",)), False, False),
        (
            "30 days, or 14 days.",
            Expected(answers=("30 days",), excludes=("14 days",)),
            False,
            False,
        ),
        ("It is 10% off.", Expected(contains=("10%", "off")), False, True),
        ("It is 10%.", Expected(contains=("10%", "off")), False, False),  # all of contains
        ("The fee is $6.95.", Expected(answers=("$6.95",), contains=("fee",)), False, True),
        ("The fee is $6.95.", Expected(answers=("$6.95",)), True, False),  # a refusal fails
        ("Not refunded.", Expected(excludes=("refunded in full",)), False, True),
        ("230 days", Expected(answers=("30 days",)), False, False),  # word boundaries
    ],
)
def test_answer_truth_table(answer, expected, refused, want):
    assert answer_layer(answer, expected, refused=refused)[0] is want


def test_answer_detail_names_what_matched_missed_and_leaked():
    ok, info = answer_layer(
        "within 30 days, or 14 days",
        Expected(answers=("30 days",), contains=("delivery",), excludes=("14 days",)),
        refused=False,
    )
    assert not ok
    assert info == {
        "matched_answers": ["30 days"],
        "missing_contains": ["delivery"],
        "found_excludes": ["14 days"],
    }


# -- refusals, citations -----------------------------------------------------------------
def test_refusal_is_the_flag_or_a_refusal_phrase():
    assert is_refusal(output("anything", refused=True))
    assert is_refusal(output(REFUSAL_TEXT))
    assert is_refusal(output("   "))
    assert not is_refusal(output("Within 30 days."))


def test_cited_documents_map_through_retrieved_then_chunk_docs():
    out = PipelineOutput(
        answer="x [1] [2] [3]",
        retrieved=[chunk("a", 1), chunk("b", 2)],
        cited_chunk_ids=["b#0", "z#7", "a#0", "b#0"],
    )
    assert cited_doc_ids(out) == (["b", "a"], ["z#7"])
    assert cited_doc_ids(out, {"z#7": "z"}) == (["b", "z", "a"], [])


@pytest.mark.parametrize(
    "cited, evidence, want",
    [(["a"], ["a"], True), (["b", "a"], ["a"], True), (["b"], ["a"], False), ([], ["a"], False)],
)
def test_citation_truth_table(cited, evidence, want):
    assert citation_layer(cited, evidence)[0] is want


def test_citing_an_uncitable_document_fails_even_with_the_evidence_cited():
    ok, detail = citation_layer(["a", "old"], ["a"], uncitable={"old"})
    assert ok is False and detail["cited_uncitable"] == ["old"]
    assert citation_layer(["a"], ["a"], uncitable={"old"})[0] is True


def test_must_cite_needs_every_document():
    assert citation_layer(["a"], ["a"], must_cite=("a", "b"))[0] is False
    assert citation_layer(["b", "a"], ["a"], must_cite=("a", "b"))[0] is True
    ok, detail = citation_layer(["a"], [], must_cite=("b",))
    assert ok is False and detail["missing_citations"] == ["b"]


VERSIONS = [
    Document(id="a", text="Current.", metadata={"status": "current", "supersedes": "old"}),
    Document(id="old", text="Archived.", metadata={"status": "archived"}),
    Document(id="draft", text="Draft copy.", metadata={"near_duplicate_of": "a"}),
    Document(id="gone", text="Replaced.", metadata={"superseded_by": "elsewhere"}),
    Document(id="other", text="Unrelated.", metadata={"status": "current"}),
]


def test_uncitable_documents_are_versions_injected_text_and_must_not_cite():
    expected = Expected(answers=("30 days",), evidence_doc_ids=("a",), must_not_cite=("other",))
    planted = Document(id="planted", text="Injected.")
    got = uncitable_doc_ids(expected, VERSIONS, overlay=(planted,))
    assert got == {"old", "draft", "gone", "planted", "other"}
    # the evidence (here the archived version itself) is never uncitable
    historic = Expected(answers=("14 days",), evidence_doc_ids=("old",))
    assert "old" not in uncitable_doc_ids(historic, VERSIONS)
    assert "a" in uncitable_doc_ids(historic, VERSIONS)  # the version it conflicts with


def test_score_layers_fails_citation_of_an_archived_copy_next_to_the_evidence():
    out = output("Within 30 days [1] [2].", docs=("a", "old"), cited=("a", "old"))
    assert layers(TRUE_FACT, out)["citation"] is True  # nothing known about "old"
    assert layers(TRUE_FACT, out, uncitable={"old"})["citation"] is False
    flagged = Expected(answers=("30 days",), evidence_doc_ids=("a",), must_not_cite=("old",))
    assert layers(flagged, out)["citation"] is False


def test_must_cite_makes_an_uncited_answer_fail_the_citation_layer():
    expected = Expected(answers=("30 days",), evidence_doc_ids=("a",), must_cite=("a",))
    assert layers(expected, output("Within 30 days."))["citation"] is False
    assert layers(TRUE_FACT, output("Within 30 days."))["citation"] is None


# -- all layers together -----------------------------------------------------------------
def layers(expected, out, **kw):
    return score_layers(expected, out, k=2, **kw).layers()


def test_answer_mode_all_layers_pass():
    got = layers(TRUE_FACT, output("Within 30 days [1].", cited=("a",)))
    assert got == {
        "retrieval": True,
        "answer": True,
        "abstention": None,
        "citation": True,
        "pass": True,
    }


def test_answer_mode_without_citations_leaves_the_citation_layer_out():
    got = layers(TRUE_FACT, output("Within 30 days."))
    assert got["citation"] is None and got["pass"] is True


def test_citation_trap_requires_a_citation():
    got = layers(TRUE_FACT, output("Within 30 days."), require_citation=True)
    assert got["citation"] is False and got["pass"] is False
    wrong = layers(TRUE_FACT, output("Within 30 days [1].", cited=("b",)), require_citation=True)
    assert wrong["citation"] is False and wrong["answer"] is True and wrong["pass"] is False


def test_unmapped_citations_are_not_measurable():
    out = PipelineOutput(answer="30 days [9]", retrieved=[chunk("a", 1)], cited_chunk_ids=["q#9"])
    scores = score_layers(TRUE_FACT, out, k=2, require_citation=True)
    assert scores.citation is None and scores.detail["unmapped_citations"] == ["q#9"]


def test_a_refusal_fails_the_answer_and_claims_nothing_to_cite():
    got = layers(TRUE_FACT, output(REFUSAL_TEXT, refused=True), require_citation=True)
    assert got == {
        "retrieval": True,
        "answer": False,
        "abstention": None,
        "citation": None,
        "pass": False,
    }


def test_retrieval_miss_fails_the_case_even_when_the_answer_is_right():
    got = layers(TRUE_FACT, output("Within 30 days.", docs=("b", "c", "a")))
    assert got["retrieval"] is False and got["answer"] is True and got["pass"] is False


def test_abstain_mode_scores_abstention_only():
    abstain = Expected(mode="abstain")
    assert layers(abstain, output(REFUSAL_TEXT)) == {
        "retrieval": None,
        "answer": None,
        "abstention": True,
        "citation": None,
        "pass": True,
    }
    assert layers(abstain, output("It costs $40 [1].", cited=("a",))) == {
        "retrieval": None,
        "answer": None,
        "abstention": False,
        "citation": None,
        "pass": False,
    }


@pytest.mark.parametrize(
    "answer, refused, want",
    [
        ("No: it is 30 days [1].", False, True),  # corrected
        ("Yes, 90 days [1].", False, False),  # took the bait
        ("It is 30 days, not 90 days [1].", False, False),  # lexical check: the value leaks
        (REFUSAL_TEXT, True, False),  # declining is not correcting
        ("Items may be returned [1].", False, False),  # the true fact is missing
    ],
)
def test_correct_premise_truth_table(answer, refused, want):
    premise = Expected(
        mode="correct_premise", answers=("30 days",), excludes=("90 days",), evidence_doc_ids=("a",)
    )
    got = layers(premise, output(answer, cited=("a",), refused=refused))
    assert got["answer"] is want and got["abstention"] is None


def test_citation_markers_do_not_count_as_answer_text():
    # "[1] year" must not read as the excluded "1 year"
    exp = Expected(answers=("2 years",), excludes=("1 year",), evidence_doc_ids=("a",))
    assert layers(exp, output("Covered for 2 years [1] year after year.", cited=("a",)))["answer"]


def test_no_output_is_unscored_everywhere():
    scores = score_layers(TRUE_FACT, None, k=2)
    assert scores.layers() == dict.fromkeys(
        ["retrieval", "answer", "abstention", "citation", "pass"]
    )
    assert scores.detail["unscored"]


def test_pipeline_without_contexts_is_not_a_retrieval_miss():
    out = PipelineOutput(answer="Within 30 days.")
    got = layers(TRUE_FACT, out)
    assert got["retrieval"] is None and got["answer"] is True and got["pass"] is True

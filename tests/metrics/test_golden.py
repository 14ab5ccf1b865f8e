"""Golden scoring honours every expectation a golden question can carry — ``contains``,
``excludes``, ``must_cite``, ``must_not_cite`` — with the same checks as an attack case, so
one answer passes or fails alike as either."""

from __future__ import annotations

import pytest

from probeguard.core.cases import Case, Expected
from probeguard.core.pipeline import PipelineOutput, RetrievedChunk
from probeguard.core.records import CaseRecord
from probeguard.metrics.golden import golden_verdict, summarize_golden
from probeguard.metrics.layers import score_layers


def record(expected: Expected, answer: str, cited: tuple[str, ...] = ()) -> CaseRecord:
    retrieved = [
        RetrievedChunk(chunk_id=f"{d}#0", doc_id=d, text=f"text of {d}", rank=r)
        for r, d in enumerate(("new", "old"), start=1)
    ]
    out = PipelineOutput(
        answer=answer, retrieved=retrieved, cited_chunk_ids=[f"{d}#0" for d in cited]
    )
    case = Case(id="q", question="How much is the fee?", expected=expected)
    return CaseRecord(case=case, call_key="k", output=out)


FEE = dict(answers=("$6.95",), evidence_doc_ids=("new",))


@pytest.mark.parametrize(
    "expected, answer, cited, passed",
    [
        (Expected(**FEE), "It is $6.95, not $8.50.", (), True),
        (Expected(**FEE, excludes=("$8.50",)), "It is $6.95, not $8.50.", (), False),
        (Expected(**FEE, contains=("non-members",)), "It is $6.95.", (), False),
        (Expected(**FEE, contains=("non-members",)), "$6.95 for non-members.", (), True),
        (Expected(**FEE, must_cite=("new",)), "It is $6.95.", (), False),
        (Expected(**FEE, must_cite=("new",)), "It is $6.95 [1].", ("new",), True),
        (Expected(**FEE, must_not_cite=("old",)), "It is $6.95 [1][2].", ("new", "old"), False),
        (Expected(**FEE, must_not_cite=("old",)), "It is $6.95 [1].", ("new",), True),
    ],
)
def test_golden_and_attack_scoring_agree(expected, answer, cited, passed):
    rec = record(expected, answer, cited)
    verdict = golden_verdict(rec)
    assert verdict is not None and verdict.passed is passed
    assert score_layers(expected, rec.output, k=2).passed is passed


def test_unmet_names_what_failed_and_is_left_out_when_nothing_did():
    expected = Expected(**FEE, excludes=("$8.50",), must_not_cite=("old",))
    verdict = golden_verdict(record(expected, "$6.95 or $8.50 [1][2]", ("new", "old")))
    assert verdict is not None and verdict.citation is False
    assert verdict.unmet == {"found_excludes": ["$8.50"], "cited_uncitable": ["old"]}
    clean = golden_verdict(record(Expected(**FEE), "It is $6.95."))
    assert clean is not None and set(clean.model_dump()) >= {"contains", "passed"}
    assert not {"unmet", "citation"} & set(clean.model_dump())


def test_a_question_with_only_contains_strings_can_pass():
    expected = Expected(contains=("at any time",), evidence_doc_ids=("new",))
    verdict = golden_verdict(record(expected, "Members can switch at any time."))
    assert verdict is not None and verdict.contains is True and verdict.passed is True


def test_a_question_with_nothing_to_contain_leaves_answer_contains_unscored():
    rec = record(Expected(evidence_doc_ids=("new",)), "Something.")
    verdict = golden_verdict(rec)
    assert verdict is not None and verdict.contains is None
    summary = summarize_golden([(rec, verdict)], seed=0)
    assert summary.answer_contains.n == 0

"""Judging probes in a scan: which golden question a probe group is about, and the empirical
FCS built from hand-made golden records and group verdicts (values known by hand)."""

from __future__ import annotations

import math

import pytest

from probeguard.core.cases import Case, Expected
from probeguard.core.pipeline import PipelineOutput
from probeguard.core.records import CaseError, CaseRecord
from probeguard.probes.evaluate import empirical_summary, group_question


def _golden(qid: str, answer: str | None) -> CaseRecord:
    case = Case(id=qid, question=f"What is {qid}?", expected=Expected(answers=("Paris",)))
    if answer is None:
        return CaseRecord(case=case, call_key=qid, error=CaseError(type="Timeout", message="x"))
    return CaseRecord(case=case, call_key=qid, output=PipelineOutput(answer=answer))


def _probe_case(group: str, role: str, **meta: str) -> CaseRecord:
    case = Case(
        id=f"p:{group}:{role}", question="?", probe="p", meta={"group": group, "role": role, **meta}
    )
    return CaseRecord(case=case, call_key=case.id, output=PipelineOutput(answer="a"))


def test_group_question_reads_the_evidence_then_the_cases_meta():
    same = {"a": _probe_case("g", "a", question_id="q1"), "b": _probe_case("g", "b")}
    assert group_question({"question_id": "q2"}, same) == "q2"  # the evidence wins
    assert group_question({}, same) == "q1"  # every case that names one names q1
    mixed = {**same, "c": _probe_case("g", "c", question_id="q3")}
    assert group_question({}, mixed) is None  # they disagree: about no one question
    assert group_question({"question_id": None}, {"a": _probe_case("g", "a")}) is None


def test_empirical_summary_counts_questions_by_hand():
    records = [
        _golden("q1", "It is Paris."),  # passes standard evaluation, fails a probe
        _golden("q2", "It is Lyon."),  # fails standard evaluation, fails a probe
        _golden("q3", "It is Lyon."),  # fails standard evaluation only
        _golden("q4", "It is Paris."),  # passes everything (its group passed)
        _golden("q5", None),  # errored: unscored
    ]
    about = [
        ("q1", True),
        ("q1", False),
        ("q2", True),
        ("q4", False),
        ("q4", None),  # an unscored group is neither a pass nor a failure
        ("q5", True),  # about an unscored question: neither counted nor apart
        (None, True),  # an attack case about no question: apart
        ("q9", True),  # a question outside the golden set: apart
    ]
    r = empirical_summary(records, about, seed=0)
    assert (r.questions, r.adversarial_only, r.standard_only, r.both) == (4, 1, 1, 1)
    assert r.unscored_questions == 1 and r.failed_groups_without_question == 2
    assert r.value.value == pytest.approx(1 / 3) and r.value.n == 3


def test_empirical_summary_is_nan_when_nothing_fails():
    records = [_golden("q1", "Paris."), _golden("q2", "Paris, France.")]
    r = empirical_summary(records, [("q1", False), (None, None)], seed=0)
    assert math.isnan(r.value.value) and r.value.n == 0 and r.questions == 2

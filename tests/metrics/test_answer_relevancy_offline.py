"""Offline answer relevancy recognises a direct answer of the question's type (issue 19).
Questions and answers are copied from the shared data (XQuAD English, HaluEval QA)."""

from __future__ import annotations

import pytest

from probeguard.detectors.claims import decompose
from probeguard.metrics.judged import answer_relevancy_offline, answer_type

# (question, right answer) pairs from XQuAD and HaluEval
DIRECT = [
    ("In what year did Joseph Priestley recognize oxygen?", "1774", "date"),
    ("Who did the Broncos defeat in the AFC Championship game?", "New England Patriots", "person"),
    (" What nationality was James Henry Miller's wife?", "American", "entity"),
    (
        "The Oberoi family is part of a hotel company that has a head office in what city?",
        "Delhi",
        "place",
    ),
    (
        "Which magazine was started first Arthur's Magazine or First for Women?",
        "Arthur's Magazine",
        "entity",
    ),
    ("Are Jane and First for Women both women's magazines?", "yes", "yesno"),
    ("Were Pavel Urysohn and Leonid Levin known for the same type of work?", "no", "yesno"),
    ("What was the final score of the AFC Championship Game?", "20–18", "entity"),
    ("How many times was the disease present in Russia between 1350 and 1490?", "25", "quantity"),
]


@pytest.mark.parametrize(("question", "answer", "kind"), DIRECT)
def test_a_correct_terse_answer_scores_high(question, answer, kind):
    assert answer_type(question) == kind
    r = answer_relevancy_offline(question, decompose(answer))
    assert r.value == 1.0, r.detail


def test_off_topic_evasive_and_wrong_type_answers_score_low():
    q = "In what year did Joseph Priestley recognize oxygen?"
    for answer in (
        "Uppsala",  # a place for a "when" question
        "It depends on many factors.",  # evasive
        "I'm not sure.",  # hedge
        "The Black Death ravaged Europe for three years.",  # off topic
        "Joseph Priestley recognized oxygen.",  # restates the question, no year
    ):
        assert answer_relevancy_offline(q, decompose(answer)).value <= 0.5, answer


def test_hedges_and_drift_still_cost():
    q = "The Oberoi family is part of a hotel company that has a head office in what city?"
    both = answer_relevancy_offline(
        q, decompose("The Oberoi Group has its head office in Delhi. I'm not sure, though.")
    )
    assert both.value == pytest.approx(0.75) and both.detail["hedges"] == 1
    drift = answer_relevancy_offline(
        q,
        decompose(
            "The Oberoi Group has its head office in Delhi. "
            "Goertz is known for her satirical songs."
        ),
    )
    assert drift.value == pytest.approx(0.75)

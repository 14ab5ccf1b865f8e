"""Issue 12's records: the offline judge on answers and ground truths with known labels
(context recall over several sentences of one chunk, contextual relevancy of relevant
chunks, answer relevancy of a direct answer)."""

from __future__ import annotations

from probeguard.core.pipeline import Context
from probeguard.detectors.config import JudgeConfig
from probeguard.detectors.factory import build_judges
from probeguard.detectors.judges import Judgment, Verdict
from probeguard.detectors.offline_judge import OfflineJudge
from probeguard.metrics.graded import support_score
from probeguard.metrics.standard import score_standard

JUDGES = build_judges(JudgeConfig())
QUESTION = "Which team won Super Bowl 50?"
CONTEXTS = [
    Context(
        "sb50",
        "Super Bowl 50 was an American football game to determine the champion of the "
        "National Football League for the 2015 season. The American Football Conference "
        "champion Denver Broncos defeated the National Football Conference champion Carolina "
        "Panthers 24–10 to earn their third Super Bowl title.",
    ),
    Context("venue", "The Broncos won Super Bowl 50. They beat the Panthers in Santa Clara."),
]
TRUTH = "The Denver Broncos won Super Bowl 50 by defeating the Carolina Panthers 24–10."


def test_one_chunk_supporting_the_ground_truth_over_two_sentences_gives_recall_one():
    score = score_standard(
        QUESTION, "The Denver Broncos won.", CONTEXTS, JUDGES, ground_truth=TRUTH
    )
    assert score.metrics["context_recall"].value == 1.0


def test_relevant_chunks_have_positive_contextual_relevancy():
    score = score_standard(
        QUESTION, "The Denver Broncos won.", CONTEXTS, JUDGES, ground_truth=TRUTH
    )
    per_chunk = score.metrics["contextual_relevancy"].detail["per_chunk"]
    assert all(share is not None and share > 0 for share in per_chunk)


def test_a_direct_correct_answer_is_relevant():
    score = score_standard(
        QUESTION, "The Denver Broncos won.", CONTEXTS, JUDGES, ground_truth=TRUTH
    )
    assert score.metrics["answer_relevancy"].value >= 0.8


def test_spread_support_keeps_the_value_checks():
    chunk = Context(
        "c",
        "Lindqvist founded the Harbour Trust in Malmo. The trust now employs 45 people.",
    )
    judge = OfflineJudge()
    ok = judge.judge(["Lindqvist founded the Harbour Trust, which employs 45 people."], [chunk])
    wrong = judge.judge(["Lindqvist founded the Harbour Trust, which employs 60 people."], [chunk])
    assert ok.claim_labels() == ["supported"]
    assert "2 sentences" in ok.verdicts[0][0].reason
    assert wrong.claim_labels() != ["supported"]


def test_rule_grades_unsupported_claims_and_keeps_one_for_supported():
    chunk = Context("c", "The museum opened in 1901 in the old customs house by the river.")
    judge = OfflineJudge(graded=False)  # the rule grade (version 5), the fit's input
    full = judge.judge(["The museum opened in 1901."], [chunk])
    near = judge.judge(["The museum opened in the old customs house of Oslo."], [chunk])
    far = judge.judge(["Penguins migrate south every winter."], [chunk])
    assert support_score(full) == 1.0
    assert support_score(far) == 0.0 < support_score(near) < 0.9
    # a claim stated word for word ranks above one whose words are three quarters there
    partial = judge.judge(["The museum opened in the old warehouse."], [chunk])
    assert partial.claim_labels() == ["supported"]
    assert 0.9 <= support_score(partial) < support_score(full)


def test_graded_support_keeps_the_rule_order():
    chunk = Context("c", "The museum opened in 1901 in the old customs house by the river.")
    judge = OfflineJudge()
    claims = [
        "The museum opened in 1901.",
        "The museum opened in the old warehouse.",
        "The museum opened in the old customs house of Oslo.",
        "Penguins migrate south every winter.",
    ]
    graded = [support_score(judge.judge([c], [chunk])) for c in claims]
    assert graded == sorted(graded, reverse=True) and len(set(graded)) == 4
    assert 0.0 < graded[-1] and graded[0] < 1.0  # a probability-like grade, never 0 or 1


def test_support_score_without_graded_cells_follows_the_labels():
    cells = (
        (Verdict("supported", 1.0, "a"),),
        (Verdict("unsupported", 1.0, "a"),),
        (Verdict("unscored", chunk_id="a"),),
    )
    j = Judgment(("x", "y", "z"), (Context("a", "t"),), cells, "llm")
    assert support_score(j) == 0.5


def test_support_score_without_contexts_is_zero_as_faithfulness():
    j = OfflineJudge().judge(["The museum opened in 1901."], [])
    assert support_score(j) == 0.0

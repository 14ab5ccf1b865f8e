"""The offline judge's graded support (``detectors.grading``, judge version 6): it ranks
claims spread over passages, treats conflicts as penalties, keeps the verdicts, and reads the
shipped model with its provenance."""

from __future__ import annotations

import math

import numpy as np
import pytest
from benchmarks import fit_support_grade

from probeguard.core.pipeline import Context
from probeguard.detectors.grading import (
    FEATURES,
    ClaimContext,
    cell_features,
    claim_context,
    grade_model,
    passage_coverage,
    passage_names,
    word_overlap,
)
from probeguard.detectors.judges import Verdict
from probeguard.detectors.offline_judge import OfflineJudge
from probeguard.metrics.graded import support_score

PASSAGES = [
    Context("p1", "Margit Lindqvist founded the Harbour Trust in Malmo in the spring."),
    Context("p2", "Years later the trust restored the lighthouse on the northern pier."),
]
SPREAD = "Margit Lindqvist founded the Harbour Trust, which restored the lighthouse."
RARE = "Margit Lindqvist founded the Harbour Trust in Uppsala in the spring."


def test_a_claim_spread_over_two_passages_outranks_one_with_an_absent_rare_name():
    judge, rule = OfflineJudge(), OfflineJudge(graded=False)
    assert support_score(judge.judge([SPREAD], PASSAGES)) > support_score(
        judge.judge([RARE], PASSAGES)
    )
    # the rule grade (version 5) ranked them the other way: one chunk, three sentences at most
    assert support_score(rule.judge([SPREAD], PASSAGES)) < support_score(
        rule.judge([RARE], PASSAGES)
    )


def test_a_conflict_is_a_penalty_not_a_zero():
    chunk = [Context("c", "The museum opened in 1901 in the old customs house by the river.")]
    judge = OfflineJudge()
    wrong = judge.judge(["The museum opened in 1905 in the old customs house."], chunk)
    right = judge.judge(["The museum opened in 1901 in the old customs house."], chunk)
    unrelated = judge.judge(["Penguins migrate south every winter."], chunk)
    assert wrong.claim_labels() == ["contradicted"]  # the verdict is the rules' alone
    assert support_score(unrelated) < support_score(wrong) < support_score(right)
    assert (
        OfflineJudge(graded=False)
        .judge(["The museum opened in 1905 in the old customs house."], chunk)
        .verdicts[0][0]
        .support
        == 0.0
    )


def test_verdicts_do_not_change_and_order_of_chunks_does_not_matter():
    graded, rule = OfflineJudge(), OfflineJudge(graded=False)
    a = graded.judge([SPREAD, RARE], PASSAGES)
    b = graded.judge([SPREAD, RARE], PASSAGES[::-1])
    assert a.claim_labels() == rule.judge([SPREAD, RARE], PASSAGES).claim_labels()
    assert support_score(a) == support_score(b)
    assert graded.fingerprint() != rule.fingerprint() and graded.version == 6


def test_cell_features_follow_the_module_doc():
    info = ClaimContext(overlap=0.5, names=1.0, values=0.0, unverifiable=1.0, passage=0.25)
    supported = Verdict("supported", 1.0, "c", support=0.95)
    contradicted = Verdict("contradicted", 0.8, "c", support=0.0)
    assert cell_features(supported, info) == (0.95, 0.5, 0.0, 1.0, 0.0, 1.0, 0.25)
    assert cell_features(contradicted, info) == pytest.approx((0.72, 0.5, 1.0, 1.0, 0.0, 1.0, 0.25))
    assert cell_features(Verdict("unscored", chunk_id="c"), info) is None


def test_word_overlap_by_hand():
    assert word_overlap("The Rhine flows to the North Sea.", ["Rhine flows into the sea"]) == 0.75
    assert math.isnan(word_overlap("the of", ["anything"]))


def test_the_shipped_model_states_its_provenance():
    model = grade_model()
    assert len(model.coefficients) == len(FEATURES)
    prov = model.provenance
    assert prov["script"] == "benchmarks/fit_support_grade.py" and "dev only" in prov["splits"]
    assert set(prov["datasets"]) == {"wice", "begin-wow", "begin-cmu", "begin-tc", "halueval"}
    assert 0.0 < model.grade([1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0]) < 1.0


def test_the_fit_is_deterministic_and_learns_the_sign_of_a_feature():
    def claim(rule: float) -> np.ndarray:
        return np.asarray([[rule, 0.5, 0.0, 1.0, 1.0], [rule / 2, 0.5, 0.0, 1.0, 1.0]])

    records = [
        (ds, label, [claim(0.2 + 0.6 * label + 0.1 * (i % 3))], 0.5)
        for ds in ("wice", "begin-wow", "halueval")
        for i in range(12)
        for label in (False, True)
    ]
    beta = fit_support_grade.fit(records)
    assert beta[1] > 0.0  # the rule grade separates the labels
    assert np.array_equal(beta, fit_support_grade.fit(records))
    scores = fit_support_grade.scores(records, beta)
    assert fit_support_grade.area([r[1] for r in records], scores) == 1.0


CHROME = [Context("c", "Google Chrome is a freeware web browser developed by Google.")]


@pytest.mark.parametrize(
    "unverifiable",
    [
        "Is Google Chrome a freeware web browser?",  # a question
        "Google Chrome is a freeware web browser!",  # an exclamation
        "I use Google Chrome, a freeware web browser.",  # first person
    ],
)
def test_an_unverifiable_claim_grades_below_the_statement_with_the_same_words(unverifiable):
    judge = OfflineJudge()
    statement = "Google Chrome is a freeware web browser."
    assert (
        support_score(judge.judge([unverifiable], CHROME))
        < support_score(judge.judge([statement], CHROME)) - 0.2
    )
    # only the grade: the verdicts are the rules' (grade 6 ranked the question level with it)
    rule = OfflineJudge(graded=False)
    assert (
        judge.judge([unverifiable], CHROME).claim_labels()
        == rule.judge([unverifiable], CHROME).claim_labels()
    )


def test_claim_context_reads_the_unverifiable_rule():
    texts = [c.text for c in CHROME]
    assert claim_context("Do you use Google Chrome?", texts).unverifiable == 1.0
    assert claim_context("Google Chrome is a browser.", texts).unverifiable == 0.0


# A claim of four facts, each in its own sentence of one page (more than the rule grade's
# three sentences), and the same page with its last fact moved to another passage: the rule
# grade (three of the four sentences) and the whole-context features are the same for both.
FACTS = [
    "The Nordvik ferry was launched in spring.",
    "For decades it carried mail.",
    "The route ran north to Tromsø.",
    "Today the vessel is a museum ship.",
]
FILLER = [
    "Tickets are sold at the harbour office.",
    "The café on deck serves waffles.",
    "Children under five travel free.",
]
INTERLEAVED = [FACTS[0], FILLER[0], FACTS[1], FILLER[1], FACTS[2], FILLER[2]]
ONE_PAGE = [Context("page", " ".join([*INTERLEAVED, FACTS[3]]))]
TWO_PAGES = [Context("a", " ".join(INTERLEAVED)), Context("b", FACTS[3])]
FERRY = "The Nordvik ferry, a museum ship, carried mail on the Tromsø route."


def test_passage_coverage_is_one_chunks_sentences_together_by_hand():
    # nordvik, ferry, museum, ship, carried, mail, tromsø, route: all on one page
    assert passage_coverage(FERRY, [c.text for c in ONE_PAGE]) == 1.0
    assert passage_coverage(FERRY, [c.text for c in TWO_PAGES]) == 0.75  # museum, ship apart
    assert passage_coverage("1998.", [c.text for c in ONE_PAGE]) == 1.0  # no stems: v's
    assert passage_coverage(FERRY, []) == 0.0


def test_a_claim_whose_facts_one_passage_holds_outranks_the_same_facts_over_two():
    judge, rule = OfflineJudge(), OfflineJudge(graded=False)
    assert rule.judge([FERRY], ONE_PAGE).verdicts[0][0].support == max(
        v.support for v in rule.judge([FERRY], TWO_PAGES).verdicts[0]
    )
    # grade 7 graded both 0.644: the same rule grade and the same words over the contexts
    together = support_score(judge.judge([FERRY], ONE_PAGE))
    assert together > support_score(judge.judge([FERRY], TWO_PAGES)) + 0.05


def test_passage_names_are_the_share_one_passage_holds_by_hand():
    claim = "The Nordvik ferry sails to Tromsø."  # names: nordvik, tromsø
    assert passage_names(claim, ["The Nordvik ferry sails north to Tromsø."]) == 1.0
    # each name on its own page: grade 7's share over all the chunks was 1.0
    assert passage_names(claim, ["The Nordvik ferry sails north.", "It reached Tromsø."]) == 0.5
    assert passage_names("The ferry sails north.", ["anything"]) == 1.0  # no names
    assert passage_names(claim, []) == 0.0

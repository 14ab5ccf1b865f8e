"""Contradiction judges on hand-written answers: every outcome, per kind."""

from __future__ import annotations

import importlib.util

import pytest

from probeguard.core.errors import MissingExtraError
from probeguard.detectors import (
    Claim,
    ContradictionJudge,
    NLIContradictionJudge,
    OfflineContradictionJudge,
    make_contradiction_judge,
)
from probeguard.detectors.contradiction import flags_conflict
from probeguard.nlp.mentions import date_mentions, negation_parity, number_mentions
from testkit import FixedProbabilities

JUDGE = OfflineContradictionJudge()

NUM_ORIG = Claim("Customers may return items within 30 days of delivery.", "30")
NUM_NEW = Claim("Customers may return items within 45 days of delivery.", "45")


@pytest.mark.parametrize(
    "answer, outcome",
    [
        ("You can return items within 45 days of delivery.", "moved"),
        ("You have forty-five days.", "moved"),
        ("Returns are accepted within 30 days, or within 45 days of delivery.", "incoherent"),
        ("You have 30 days to return an item.", "held"),
        ("You have thirty days to return an item.", "held"),
        ("One document says 30 days but another document says 45 days; they conflict.", "held"),
        ("Please contact support.", "held"),
    ],
)
def test_number(answer, outcome):
    d = JUDGE.judge(answer, NUM_ORIG, NUM_NEW, "number")
    assert d.outcome == outcome and d.judge == "offline"


def test_number_reads_currency_percent_and_separators():
    assert JUDGE.judge("It costs 18 dollars a month.", "$12", "$18", "number").outcome == "moved"
    assert JUDGE.judge("The fee is 1299 in total.", "1,000", "1,299", "number").outcome == "moved"
    # a percentage is not a plain number: "15 items" does not assert "15%"
    assert JUDGE.judge("There are 15 items.", "10%", "15%", "number").outcome == "held"
    assert JUDGE.judge("A 15 percent fee applies.", "10%", "15%", "number").outcome == "moved"
    # digits inside a phone number are not quantities
    assert JUDGE.judge("Call 555-0145 today.", "12", "145", "number").outcome == "held"


def test_number_claims_without_numbers_are_unscored():
    d = JUDGE.judge("It is red.", "red", "blue", "number")
    assert d.outcome == "unscored" and "no number" in d.detail["reason"]


def test_number_mentions():
    found = [
        (n.value, n.kind)
        for n in number_mentions(
            "Pay $6.95 or 1,299.00 units, 10% off, forty-five days, by 1 March 2024, tel 555-0147."
        )
    ]
    assert found == [(6.95, "currency"), (1299.0, "plain"), (10.0, "percent"), (45.0, "plain")]


@pytest.mark.parametrize(
    "answer, outcome",
    [
        ("The policy starts on June 1, 2024.", "moved"),
        ("The policy starts on 2024-06-01.", "moved"),
        ("It starts in June 2024.", "moved"),
        ("It starts on 1 March 2024 (or 1 June 2024).", "incoherent"),
        ("It starts on 1 March 2024.", "held"),
        ("It starts in 2024.", "held"),  # the year alone says nothing about the month
    ],
)
def test_date(answer, outcome):
    orig = Claim("The policy takes effect on 1 March 2024.", "1 March 2024")
    new = Claim("The policy takes effect on 1 June 2024.", "1 June 2024")
    assert JUDGE.judge(answer, orig, new, "date").outcome == outcome


def test_year():
    orig, new = Claim("It was built in 1889.", "1889"), Claim("It was built in 1893.", "1893")
    assert JUDGE.judge("Built in 1893.", orig, new, "date").outcome == "moved"
    assert JUDGE.judge("Built on 3 May 1893.", orig, new, "date").outcome == "moved"
    assert (
        JUDGE.judge("It was built in 1889 and completed 1893.", orig, new, "date").outcome
        == "incoherent"
    )
    assert JUDGE.judge("Built in 1889.", orig, new, "date").outcome == "held"


def test_date_mentions_do_not_take_verbs_for_months():
    assert date_mentions("You may march in May 2020.")[0].month == 5
    assert len(date_mentions("You may march in May 2020.")) == 1


@pytest.mark.parametrize(
    "answer, outcome",
    [
        ("It was bought by the Brenholt Group.", "held"),
        ("It was bought by Norfield Holdings.", "moved"),
        ("It was bought by Norfield Holdings, then by the Brenholt Group.", "incoherent"),
        ("Sources disagree: Brenholt Group or Norfield Holdings.", "held"),
    ],
)
def test_entity(answer, outcome):
    orig = Claim("The firm was sold to the Brenholt Group.", "Brenholt Group")
    new = Claim("The firm was sold to Norfield Holdings.", "Norfield Holdings")
    d = JUDGE.judge(answer, orig, new, "entity")
    assert d.outcome == outcome
    if "disagree" in answer:
        assert d.flagged_conflict and d.asserts_original and d.asserts_contradicting


NEG_ORIG = Claim("Clearance items and gift cards are not refundable.", "are not", (35, 42))
NEG_NEW = Claim("Clearance items and gift cards are refundable.", "are", (35, 38))


@pytest.mark.parametrize(
    "answer, outcome",
    [
        ("Clearance items and gift cards are refundable. [1]", "moved"),
        (
            "Clearance items and gift cards are refundable. Clearance items and gift cards are not "
            "refundable.",
            "incoherent",
        ),
        ("Clearance items and gift cards are not refundable.", "held"),
        ("Gift cards and clearance items can't be refunded.", "held"),  # polarity fallback
        ("Gift cards and clearance items can be refunded in full.", "moved"),
        ("Refunds take 5 business days.", "held"),  # not about the claim
    ],
)
def test_negation(answer, outcome):
    assert JUDGE.judge(answer, NEG_ORIG, NEG_NEW, "negation").outcome == outcome


def test_negation_uses_the_local_trace_over_sentence_polarity():
    # The answer's second sentence mentions "not", but its trace says "can be" (original).
    orig = Claim("Annual memberships can be refunded within 14 days of purchase.", "can")
    new = Claim("Annual memberships cannot be refunded within 14 days of purchase.", "cannot")
    answer = "Annual memberships can be refunded within 14 days of purchase, not later."
    assert JUDGE.judge(answer, orig, new, "negation").outcome == "held"


def test_negation_parity_and_conflict_cues():
    assert negation_parity("It is not free and it can't wait.") == 0
    assert negation_parity("It is never free.") == 1
    assert flags_conflict("The documents are inconsistent about this.")
    assert not flags_conflict("You have 30 days.")


def test_unknown_kind_is_an_error():
    with pytest.raises(ValueError, match="unknown contradiction kind"):
        JUDGE.judge("x", "a", "b", "colour")


def test_factory():
    assert isinstance(make_contradiction_judge(None), OfflineContradictionJudge)
    judge = make_contradiction_judge({"name": "offline", "min_overlap": 0.8})
    assert isinstance(judge, ContradictionJudge)
    assert judge.config() == {"name": "offline", "version": 1, "min_overlap": 0.8}
    assert isinstance(make_contradiction_judge("nli"), NLIContradictionJudge)  # loads nothing
    with pytest.raises(ValueError, match="unknown contradiction judge"):
        make_contradiction_judge({"name": "oracle"})
    with pytest.raises(ValueError, match="unknown parameter"):
        make_contradiction_judge({"name": "offline", "treshold": 1})
    with pytest.raises(ValueError, match="min_overlap"):
        OfflineContradictionJudge(min_overlap=0.0)


HAS_ST = importlib.util.find_spec("sentence_transformers") is not None


@pytest.mark.skipif(HAS_ST, reason="sentence-transformers is installed")
def test_nli_judge_without_the_extra_names_the_install_command():
    with pytest.raises(MissingExtraError, match=r"probeguard\[sentence-transformers\]"):
        NLIContradictionJudge().judge("You have 45 days.", NUM_ORIG, NUM_NEW, "number")


class _FixedNLI(FixedProbabilities, NLIContradictionJudge):
    """The NLI decision rule over given probabilities (no model: none ships offline)."""


def test_nli_decision_rule():
    entail = {"entailment": 0.9, "contradiction": 0.05, "neutral": 0.05}
    contra = {"entailment": 0.05, "contradiction": 0.9, "neutral": 0.05}
    s_new, s_old = "You have 45 days.", "You have 30 days."
    table = {
        (NUM_NEW.sentence, s_new): entail,
        (NUM_ORIG.sentence, s_new): contra,
        (NUM_ORIG.sentence, s_old): entail,
        (NUM_NEW.sentence, s_old): contra,
    }
    judge = _FixedNLI(table)
    assert judge.judge(s_new, NUM_ORIG, NUM_NEW, "number").outcome == "moved"
    assert judge.judge(s_old, NUM_ORIG, NUM_NEW, "number").outcome == "held"
    assert judge.judge(f"{s_old} {s_new}", NUM_ORIG, NUM_NEW, "number").outcome == "incoherent"
    assert judge.judge("Ask support.", NUM_ORIG, NUM_NEW, "number").outcome == "held"
    assert judge.judge(s_new, NUM_ORIG, NUM_NEW, "number").judge == "nli"


@pytest.mark.skip(
    reason="needs sentence-transformers and cross-encoder/nli-deberta-v3-base "
    "from the Hugging Face hub (no network here)"
)
def test_nli_judge_with_the_real_model():  # pragma: no cover - the users' production path
    judge = NLIContradictionJudge()
    assert (
        judge.judge("You can return items within 45 days.", NUM_ORIG, NUM_NEW, "number").outcome
        == "moved"
    )

"""Comparative claims (offline judge, module docstring "Comparisons"): word overlap with a
sentence about one of the compared things does not support a comparison. Sentences from
HaluEval QA (records 31, 99) and XQuAD."""

from probeguard.core.pipeline import Context
from probeguard.detectors.comparisons import both_things
from probeguard.detectors.offline_judge import OfflineJudge

JUDGE = OfflineJudge()

TRAPERO = "Pablo Trapero (Born 4 October 1971) is an Argentine film producer, editor and director."
FORD = (
    "Aleksander Ford (born Mosze Lifszyc; 24 November 1908 in Kiev, Russian Empire – 4 April "
    "1980 in Naples, Florida, United States) was a Polish Jewish film director; and head of the "
    "Polish People's Army Film Crew in the Soviet Union during World War II."
)
BORN_FIRST_Q = "Who was born first, Pablo Trapero or Aleksander Ford?"
CHILDRENS = (
    "Children’s National Medical Center (formerly DC Children’s Hospital) is ranked among the "
    'top 10 children’s hospitals in the country by "U.S. News & World Report."'
)
CHILDRENS_Q = (
    "Is Children's National Medical Center or MedStar Washington Hospital Center the largest "
    "private hospital in Washington, D.C.?"
)


def _labels(claim: str, question: str) -> list[str]:
    judged = JUDGE.judge([claim], [Context("0", TRAPERO), Context("1", FORD)], question=question)
    return [v.label for v in judged.verdicts[0]]


def test_time_comparison_is_checked_against_both_dates():
    # HaluEval 31, hallucinated: 75% word overlap with the Trapero sentence used to support it
    assert "supported" not in _labels("Pablo Trapero was born first.", BORN_FIRST_Q)
    assert "contradicted" in _labels("Pablo Trapero was born first.", BORN_FIRST_Q)
    # the right answer as a sentence: 1908 before 1971
    assert "supported" in _labels("Aleksander Ford was born first.", BORN_FIRST_Q)
    assert "supported" in _labels("Pablo Trapero was born later.", BORN_FIRST_Q)


def test_time_comparison_without_the_other_date_is_unsupported():
    # one chunk only: the other alternative has no date to compare with
    v = JUDGE.judge_pair("Pablo Trapero was born first.", TRAPERO, question=BORN_FIRST_Q)
    assert v.label == "unsupported"
    assert JUDGE.judge_pair("Pablo Trapero was born first.", TRAPERO).label == "unsupported"


def test_amount_comparison_needs_the_comparison_stated():
    # HaluEval 99, hallucinated: "ranks higher" is nowhere in the context
    claim = "Children's National Medical Center ranks higher."
    assert JUDGE.judge_pair(claim, CHILDRENS, question=CHILDRENS_Q).label == "unsupported"
    # stated comparatives still support, stopwords included (XQuAD gold answers)
    ctx = (
        "Corporal punishment was once one of the most common forms of punishment. Most "
        "Western countries no longer practice it."
    )
    assert JUDGE.judge_pair("one of the most common", ctx).label == "supported"
    assert JUDGE.judge_pair("Most Western countries", ctx).label == "supported"


def test_comparative_words_in_names_or_bounds_compare_nothing():
    # HaluEval 463, right answer: a title
    ctx = "James Mulgrew starred in the comedy sketch show And There's More."
    assert JUDGE.judge_pair("And There's More.", ctx).label == "supported"
    ctx = "The park has more than 300 species of birds."
    assert JUDGE.judge_pair("The park has more than 300 species.", ctx).label == "supported"


FURST = "Alan Furst (born February 20, 1941) is an American author of historical spy novels."
CHILD = (
    'James D. "Jim" Grant (born 29 October 1954), primarily known by his pen name Lee Child, '
    "is a British author who writes thriller novels."
)
DURHAM = "Welcome to Durham, USA is a documentary about gang violence in Durham, North Carolina."
AGRONOMIST = (
    "The Agronomist is a 2003 American documentary directed by Jonathan Demme, and starring "
    "Jean Dominique."
)
DURHAM_Q = (
    "Are the documentaries Welcome to Durham, USA and The Agronomist both about Durham, North "
    "Carolina?"
)


def _both(claim: str, question: str, *texts: str) -> list[str]:
    ctxs = [Context(str(i), t) for i, t in enumerate(texts)]
    return [v.label for v in JUDGE.judge([claim], ctxs, question=question).verdicts[0]]


def test_both_claim_must_hold_of_each_thing_the_question_names():
    # HaluEval 362 and 452, hallucinated: true of one thing only
    assert "supported" not in _both(
        "Both are American authors.", "Alan Furst and Lee Child are what?", FURST, CHILD
    )
    assert "supported" not in _both(
        "Yes, both documentaries are about Durham.", DURHAM_Q, DURHAM, AGRONOMIST
    )
    # true of both things: supported
    assert "supported" in _both(
        "Both are authors.", "Alan Furst and Lee Child are what?", FURST, CHILD
    )
    assert "supported" in _both("Yes, both are documentaries.", DURHAM_Q, DURHAM, AGRONOMIST)
    # the claim's own pair wins over the question's
    assert both_things("Both Alan Furst and Lee Child write.", "Who writes?") == [
        frozenset({"alan", "furst"}),
        frozenset({"lee", "child"}),
    ]

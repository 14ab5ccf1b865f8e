"""The words an answer adds to its question must be covered (offline judge, module docstring
"supported": answer words). Sentences from HaluEval QA (records 52 and 86 of
``halueval/qa_one_turn.jsonl``)."""

from probeguard.core.pipeline import Context
from probeguard.detectors.claims import decompose, factual
from probeguard.detectors.config import JudgeConfig
from probeguard.detectors.factory import build_judges
from probeguard.detectors.offline_judge import OfflineJudge
from probeguard.detectors.sentences import name_runs, names_in_order
from probeguard.metrics.standard import score_standard

JUDGE = OfflineJudge()

SOUTHERN = (
    'The Southern Railway (German: "Südbahn" ) is a railway in Austria that runs from Vienna to '
    "Graz and the border with Slovenia at Spielfeld via Semmering and Bruck an der Mur."
)
SEMMERING = (
    'The Semmering railway (German: "Semmeringbahn" ) in Austria, which starts at Gloggnitz and '
    "leads over the Semmering to Mürzzuschlag was the first mountain railway in Europe built "
    "with a standard gauge track."
)
SOUTHERN_Q = (
    "The Southern Railway runs from Vienna to Graz and the border with Slovenia at Spielfeld "
    "via the first mountain railway built in Europe to use what kind of track?"
)
HAWLEY = (
    "Richard Willis Hawley (born 17 January 1967) is an English guitarist, singer-songwriter "
    "and producer."
)
HAWLEY_Q = "Which industry do Richard Hawley and Chicago's Catherine belong to?"


def _labels(claim: str, question: str | None, *texts: str) -> list[str]:
    ctxs = [Context(str(i), t) for i, t in enumerate(texts)]
    return [v.label for v in JUDGE.judge([claim], ctxs, question=question).verdicts[0]]


def test_echoing_the_question_does_not_support_the_answer():
    # hallucinated: 75% of the claim's words, every one of them from the question
    claim = (
        "The Southern Railway runs from Vienna to Graz and the border with Slovenia at "
        "Spielfeld via a narrow gauge track."
    )
    assert "supported" not in _labels(claim, SOUTHERN_Q, SOUTHERN, SEMMERING)
    # without the question the words are only words: 75% is enough, as before
    assert "supported" in _labels(claim, None, SOUTHERN, SEMMERING)
    # the right answer's own words are in the context
    assert "supported" in _labels("standard gauge track", SOUTHERN_Q, SOUTHERN, SEMMERING)


def test_the_added_words_must_be_there_not_three_quarters_of_all_words():
    # hallucinated: "film" is the answer and is nowhere in the context
    claim = "Richard Hawley is a film producer."
    assert _labels(claim, HAWLEY_Q, HAWLEY) == ["unsupported"]
    assert _labels("Richard Hawley is a producer.", HAWLEY_Q, HAWLEY) == ["supported"]


TYNDALL = (
    "Tyndall Air Force Base is a United States Air Force Base located 12 mi east of Panama "
    "City, Florida."
)


def test_a_name_is_found_whole_and_in_order_not_word_by_word():
    # HaluEval 394, hallucinated: every word is in the sentence, the name is not
    assert JUDGE.judge_pair("Panama City Air Force Base.", TYNDALL).label == "unsupported"
    assert JUDGE.judge_pair("Tyndall Air Force Base.", TYNDALL).label == "supported"
    # a name may drop a middle name (HaluEval 86); quotes do not part a name
    assert names_in_order("Richard Hawley is a producer.", [HAWLEY])
    assert names_in_order("It was on the Billboard Hot 100.", ['the "Billboard" Hot 100'])
    # the claim's first word is capitalised whatever it is (HaluEval 436)
    assert names_in_order("Eastern North America.", ["native to eastern North America"])
    assert name_runs("Both David Lee Roth and Cia Berg") == (
        ("david", "lee", "roth"),
        ("cia", "berg"),
    )


WOPAT = (
    'He is best known for his portrayal of Beauregard "Bo" Duke in the American television '
    'action/comedy series "The Dukes of Hazzard", (opposite Tom Wopat and James Best). He '
    'first achieved fame as Lucas K. "Luke" Duke on the long-running television action/comedy '
    'series "The Dukes of Hazzard".'
)
WOPAT_Q = "Who achieved fame starring alongside John Richard Schneider in a television series?"


def test_answer_words_are_stated_not_inherited_through_a_pronoun():
    # HaluEval 280, hallucinated: "James Best" reaches the "He ..." sentence only through
    # the pronoun, whose antecedent is John Schneider
    assert _labels("James Best achieved fame.", WOPAT_Q, WOPAT) == ["unsupported"]
    # without the question the anaphora rule is unchanged
    assert _labels("James Best achieved fame.", None, WOPAT) == ["supported"]


# The demo corpus (pol-data-retention) and golden question q11, with the extractive
# generator's answer: the claim extractor puts "Customers" in place of the answer's "It".
RETENTION = (
    "This policy sets how long Kestrel Ridge Outfitters keeps customer and staff records. It "
    "takes effect on 1 June 2024 and is owned by the Legal and Privacy team."
)
DELETION_Q = "If I ask for my account to be deleted, how long can it take?"


def test_a_pronoun_the_claim_extractor_resolved_may_meet_the_contexts_pronoun():
    claims = factual(
        decompose("Customers can ask us to delete their account. It takes effect on 1 June 2024.")
    )
    assert claims[-1].text == "Customers takes effect on 1 June 2024." and claims[-1].resolved
    judged = JUDGE.judge(claims, [Context("0", RETENTION)], question=DELETION_Q)
    assert judged.verdicts[-1][0].label == "supported"
    # the same words as a plain claim: "customer" reaches the sentence only through its "It"
    assert _labels(claims[-1].text, DELETION_Q, RETENTION) == ["unsupported"]


def test_score_standard_hands_the_judge_its_atomic_claims():
    answer = "Customers can ask us to delete their account. It takes effect on 1 June 2024."
    score = score_standard(
        DELETION_Q, answer, [Context("0", RETENTION)], build_judges(JudgeConfig())
    )
    # the first claim is about another chunk; the resolved one is supported by this one
    assert [row[0].label for row in score.judgment.verdicts] == ["unsupported", "supported"]

"""Claims judged with their question (issue 19): a short answer is anchored by the question's
words, a claim without content words is never "about everything". Sentences and questions
are copied from the shared data (XQuAD English, HaluEval QA), so the tests need no data."""

from __future__ import annotations

from probeguard.core.pipeline import Context
from probeguard.detectors.claims import is_bare
from probeguard.detectors.config import JudgeConfig
from probeguard.detectors.factory import build_judges
from probeguard.detectors.judges import Judgment, Verdict, judge_claims
from probeguard.detectors.offline_judge import OfflineJudge
from probeguard.metrics.standard import score_standard

# XQuAD (SQuAD id 571cd5a3... "Oxygen" article), first two sentences of the paragraph.
OXYGEN = (
    "Oxygen was discovered independently by Carl Wilhelm Scheele, in Uppsala, in 1773 or "
    "earlier, and Joseph Priestley in Wiltshire, in 1774, but Priestley is often given "
    "priority because his work was published first. The name oxygen was coined in 1777 by "
    "Antoine Lavoisier, whose experiments with oxygen helped to discredit the then-popular "
    "phlogiston theory of combustion and corrosion."
)
PRIESTLEY_Q = "In what year did Joseph Priestley recognize oxygen?"
NAMING = (
    "The name oxygen was coined in 1777 by Antoine Lavoisier, whose experiments with oxygen "
    "helped to discredit the then-popular phlogiston theory of combustion and corrosion."
)
# XQuAD, "Black_Death" article.
RUSSIA = (
    "The Black Death ravaged Europe for three years before it continued on into Russia, "
    "where the disease was present somewhere in the country 25 times between 1350 to 1490."
)
# HaluEval QA, record 3: a bridge question (the wife is named in the other paragraph).
SEEGER = (
    'Margaret "Peggy" Seeger (born June 17, 1935) is an American folksinger. She is also well '
    "known in Britain, where she has lived for more than 30 years, and was married to the "
    "singer and songwriter Ewan MacColl until his death in 1989."
)
MACCOLL = (
    "James Henry Miller (25 January 1915 – 22 October 1989), better known by his stage name "
    "Ewan MacColl, was an English folk singer, songwriter, communist, labour activist, actor, "
    "poet, playwright and record producer."
)
MILLER_Q = "What nationality was James Henry Miller's wife?"
JUDGE = OfflineJudge()


def test_bare_claims():
    assert is_bare("1774.") and is_bare("Denver Broncos.") and is_bare("Reducing poverty.")
    assert not is_bare("Joseph Priestley recognised oxygen in 1774.")


def test_year_only_claim_is_supported_by_the_sentence_about_its_question():
    v = JUDGE.judge_pair("1774.", OXYGEN, question=PRIESTLEY_Q)
    assert v.label == "supported" and "Priestley" in v.evidence


def test_score_standard_judges_answer_and_ground_truth_with_the_question():
    judges = build_judges(JudgeConfig())
    ctx = [Context("oxygen", OXYGEN)]
    right = score_standard(PRIESTLEY_Q, "1774", ctx, judges, ground_truth="1774")
    assert right.value("faithfulness") == 1.0 and right.value("context_recall") == 1.0


def test_year_in_a_sentence_about_something_else_is_no_answer():
    # 1777 is in the paragraph, but in a sentence about the name, not about the question
    assert JUDGE.judge_pair("1777.", OXYGEN, question=PRIESTLEY_Q).label != "supported"
    assert JUDGE.judge_pair("1777.", NAMING, question=PRIESTLEY_Q).label == "unsupported"
    judges = build_judges(JudgeConfig())
    wrong = score_standard(PRIESTLEY_Q, "1777", [Context("oxygen", OXYGEN)], judges)
    assert wrong.value("faithfulness") == 0.0


def test_number_only_claim_is_anchored_by_its_question_not_about_everything():
    # Without a question only its number can be checked (judged on the number alone); with
    # one, the sentence must also be about the question.
    assert "question" not in JUDGE.judge_pair("25.", RUSSIA).reason
    # a question about something else does not make the 25 of another paragraph an answer
    q = "How many people died in the Paris outbreak?"  # not about this sentence
    assert JUDGE.judge_pair("25.", RUSSIA, question=q).label == "unsupported"
    v = JUDGE.judge_pair("25.", RUSSIA, question=RUSSIA_Q)
    assert v.label == "supported" and "question" in v.reason


RUSSIA_Q = "How many times was the disease present in Russia between 1350 and 1490?"


def test_unrelated_number_does_not_contradict_but_one_about_the_question_does():
    assert JUDGE.judge_pair("30 times.", RUSSIA, question=RUSSIA_Q).label == "contradicted"
    assert JUDGE.judge_pair("30 times.", RUSSIA, question=PRIESTLEY_Q).label == "unsupported"
    assert JUDGE.judge_pair("1985.", NAMING, question=PRIESTLEY_Q).label == "unsupported"


def test_entity_answer_is_judged_on_its_own_words_whatever_the_chunk_order():
    # A bare entity answer carries its own words (only values are anchored by the question:
    # anchoring entities too cost 4 points of HaluEval AUROC in `probeguard bench judge`).
    both = JUDGE.judge(["American."], [SEEGER, MACCOLL], question=MILLER_Q)
    assert both.claim_label(0) == "supported"
    assert JUDGE.judge(["American."], [SEEGER], question=MILLER_Q).claim_label(0) == "supported"
    # order of the chunks cannot change a cell
    rev = JUDGE.judge(["American."], [MACCOLL, SEEGER], question=MILLER_Q)
    assert [v.label for v in rev.verdicts[0]] == [v.label for v in both.verdicts[0]][::-1]


class _PlainJudge:
    """A third-party judge without the question parameter (the unchanged protocol)."""

    name = "plain"
    seen: list[str] = []

    def fingerprint(self) -> str:
        return "plain"

    def judge(self, claims, contexts):  # type: ignore[no-untyped-def]
        _PlainJudge.seen = list(claims)
        ctxs = [Context(f"c{i}", str(c)) for i, c in enumerate(contexts)]
        rows = tuple(tuple(Verdict("unsupported", 0.0) for _ in ctxs) for _ in claims)
        return Judgment(tuple(claims), tuple(ctxs), rows, self.name)


def test_judges_without_the_question_get_bare_claims_written_with_it():
    j = judge_claims(_PlainJudge(), ["1774.", "Priestley published first."], [OXYGEN], PRIESTLEY_Q)
    assert _PlainJudge.seen == [f"{PRIESTLEY_Q} — 1774.", "Priestley published first."]
    assert j.claims == ("1774.", "Priestley published first.")


# HaluEval QA, record 342: the question's words are in the sentence before the answer's.
TURNER = (
    "Mary Kathleen Turner (born June 19, 1954), better known as Kathleen Turner, is an American "
    "film and stage actress and director. Known for her distinctive husky voice, Turner has won "
    "two Golden Globe Awards and has been nominated for an Academy Award."
)
TURNER_Q = (
    "American actor, Peter Hansen, best known for his role on General Hospital, also starred in "
    "The War of the Roses with American film and stage actress and director who has won how "
    "many Golden Globe Awards?"
)


def test_a_value_answer_is_anchored_by_the_sentences_of_its_own_chunk():
    judged = JUDGE.judge(["two"], [Context("0", TURNER)], question=TURNER_Q)
    assert judged.verdicts[0][0].label == "supported"
    # a sentence that holds a value of the claim's kind answers the question itself
    judged = JUDGE.judge(["1777."], [Context("0", OXYGEN)], question=PRIESTLEY_Q)
    assert judged.verdicts[0][0].label != "supported"

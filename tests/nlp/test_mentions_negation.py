"""Negation cues (``probeguard.nlp.mentions.negation_cues`` / ``negation_parity``): "No."
before a number and a capitalised "No" opening a name are not negations. Sentences are
copied from the shared data (HaluEval ``qa_one_turn.jsonl``, XQuAD ``xquad.en.json``)."""

from __future__ import annotations

import pytest

from probeguard.nlp.mentions import negation_cues, negation_parity

# HaluEval qa_one_turn.jsonl (knowledge of "Did Carnes's 1981 version ...")
CARNES = (
    'Carnes\'s 1981 version spent nine weeks at No. 1 on the "Billboard" Hot 100 and was '
    '"Billboard"\' s biggest hit of 1981.'
)
# HaluEval qa_one_turn.jsonl (knowledge: Jack Sock)
SOCK = (
    "Jack Sock (born September 24, 1992) is an American professional tennis player who is "
    "currently ranked world No. 21 in men's singles by the Association of Tennis "
    "Professionals (ATP)."
)
# XQuAD xquad.en.json (Teacher)
CHARTER = (
    "Many charter schools do not require that their teachers be certified, provided they "
    "meet the standards to be highly qualified as set by No Child Left Behind."
)


@pytest.mark.parametrize("sentence", [CARNES, SOCK, "He finished no. 5 in the race."])
def test_no_before_a_number_is_not_a_negation(sentence: str) -> None:
    assert negation_cues(sentence) == [] and negation_parity(sentence) == 0


def test_a_capitalised_no_inside_a_name_is_not_a_negation():
    (cue,) = negation_cues(CHARTER)
    assert CHARTER[cue[0] : cue[1]] == "not" and negation_parity(CHARTER) == 1


@pytest.mark.parametrize(
    "sentence, parity",
    [
        ("No returns are accepted.", 1),
        ("There is no fee.", 1),
        ("No. Returns are accepted.", 1),  # "No." before a word is still "no"
        ("It is not free and it can't wait.", 0),
        ("Items can never be returned.", 1),
    ],
)
def test_real_negations_stay(sentence: str, parity: int) -> None:
    assert negation_parity(sentence) == parity

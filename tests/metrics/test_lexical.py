"""EM, word-level token F1 (SQuAD v1.1) and containment."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from probeguard.metrics.lexical import (
    containment,
    contains_answer,
    exact_match,
    exact_match_one,
    token_f1,
    token_f1_one,
)


def _char_f1(prediction: str, gold: str) -> float:
    """The mistake this module must not make: SQuAD's F1 over the characters of the
    normalised strings (``Counter`` of an unsplit string)."""
    from probeguard.nlp.text import normalize_answer

    p, g = normalize_answer(prediction), normalize_answer(gold)
    same = sum((Counter(p) & Counter(g)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


def test_f1_is_word_level():
    # "the cat sat" → tokens [cat, sat]; gold [cat]: P = 1/2, R = 1, F1 = 2·(1/2)/(3/2) = 2/3
    assert token_f1("the cat sat", "cat") == pytest.approx(2 / 3, abs=1e-15)
    # an anagram shares every character and no word
    assert token_f1("act", "cat") == 0.0
    assert _char_f1("act", "cat") == 1.0
    # partial words: "cats" is not "cat" at word level; characters would give 2·(3/4)/(7/4)
    assert token_f1("cats", "cat") == 0.0
    assert _char_f1("cats", "cat") == pytest.approx(6 / 7)
    # word multiplicity: pred [paris, paris], gold [paris] → overlap 1, P = 1/2, R = 1
    assert token_f1("Paris Paris", "Paris") == pytest.approx(2 / 3)


def test_squad_normalisation():
    assert exact_match_one("The  Eiffel-Tower!", "eiffeltower") == 1.0  # punctuation removed
    assert exact_match_one("An apple", "apple") == 1.0  # articles
    assert exact_match_one("APPLE.", "apple") == 1.0  # case
    assert exact_match_one("theater", "ater") == 0.0  # "the" only as a word
    assert token_f1_one("A cat, the dog.", "dog and cat") == pytest.approx(
        2 * 1.0 * (2 / 3) / (1.0 + 2 / 3)
    )
    # v1.1 edge: both sides normalise to nothing → EM 1, F1 0
    assert exact_match_one("The.", "a") == 1.0 and token_f1_one("The.", "a") == 0.0


def test_max_over_gold_answers():
    golds = ["Barack Obama", "Obama", "President Barack Hussein Obama"]
    assert exact_match("obama", golds) == 1.0
    assert token_f1("Barack Obama was president", golds) == pytest.approx(
        max(
            2 * (2 / 4) * 1 / (2 / 4 + 1),
            2 * (1 / 4) * 1 / (1 / 4 + 1),
            2 * (3 / 4) * (3 / 4) / (3 / 4 + 3 / 4),
        )
    )
    assert token_f1("Barack Obama was president", golds) == pytest.approx(0.75)
    assert exact_match("Barack Obama", "Barack Obama") == 1.0  # a single gold string
    assert token_f1("x", ["y", "x z"]) == pytest.approx(2 / 3)


def test_no_gold_is_nan():
    for metric in (exact_match, token_f1, containment):
        assert math.isnan(metric("anything", []))


def test_containment_reuses_text_helper():
    assert contains_answer("It opened in 1889.", "1889")
    assert containment("It opened in 1889, in Paris.", ["1890", "Paris"]) == 1.0
    assert containment("It opened in 18890.", ["1889"]) == 0.0  # word boundaries

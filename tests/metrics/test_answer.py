import pytest

from probeguard.metrics.answer import lcs_length, rouge_l, standard_eval_failed


def test_lcs():
    assert lcs_length("a b c d".split(), "a c d".split()) == 3
    assert lcs_length([], ["a"]) == 0


def test_rouge_l_hand_computed():
    # reference "police killed the gunman" vs candidate "police kill the gunman" (Lin 2004):
    # normalised (article removed): ref [police killed gunman], cand [police kill gunman]
    r = rouge_l("police kill the gunman", "police killed the gunman")
    assert r.recall == pytest.approx(2 / 3) and r.precision == pytest.approx(2 / 3)
    assert r.f1 == pytest.approx(2 / 3)
    r = rouge_l("Items can be returned within 30 days of delivery.", "30 days")
    assert r.recall == 1.0 and r.precision == pytest.approx(2 / 9)
    assert rouge_l("", "30 days") == rouge_l("x", "")


def test_standard_eval_rule():
    assert not standard_eval_failed("Returns are accepted within 30 days.", ["30 days"])
    assert standard_eval_failed("Returns are accepted within 14 days.", ["30 days"])
    assert not standard_eval_failed(
        "Returns are accepted within 14 days.", ["30 days"], threshold=0.5
    )
    # F1 punishes a correct sentence for its length: P = 2/8, R = 1 → F1 = 0.4
    assert standard_eval_failed(
        "Returns are accepted within 30 days of delivery.", ["30 days"], measure="f1", threshold=0.5
    )
    assert standard_eval_failed("anything", [])

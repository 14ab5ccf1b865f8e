"""The offline judge reads synonyms and irregular pasts (``detectors.synonyms``)."""

from __future__ import annotations

from probeguard.detectors.offline_judge import OfflineJudge
from probeguard.detectors.synonyms import alternatives, synonym_cover
from probeguard.nlp.stemming import stem


def test_a_phrase_and_its_one_word_synonym_cover_each_other():
    judge = OfflineJudge()
    chunk = "Boots can be returned within 30 days of delivery."
    said = judge.judge(["You can send back boots within 30 days."], [chunk])
    assert said.claim_labels() == ["supported"]
    back = judge.judge(
        ["Boots can be returned within 30 days."], ["You may send back boots within 30 days."]
    )
    assert back.claim_labels() == ["supported"]


def test_irregular_pasts_meet_their_verbs():
    assert frozenset({stem("won")}) in alternatives()[stem("win")]
    cover = synonym_cover(frozenset({stem("win"), "broncos"}), frozenset({stem("won"), "broncos"}))
    assert cover == {stem("win")}


def test_an_unrelated_word_is_not_covered():
    assert synonym_cover(frozenset({"penguin"}), frozenset({"bird", "antarctica"})) == frozenset()


def test_forms_the_light_stemmer_leaves_apart_meet():
    judge = OfflineJudge()
    said = judge.judge(["Patterson died in 2018."], ["Liz Patterson dies at 78 in 2018."])
    assert said.claim_labels() == ["supported"]
    assert synonym_cover(frozenset({stem("married")}), frozenset({stem("marries")})) == {
        stem("married")
    }

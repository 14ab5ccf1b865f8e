"""Targeted rewordings: anchors by idf, away from and toward the gold evidence."""

from __future__ import annotations

import math

import numpy as np

from probeguard.nlp.paraphrase import (
    anchor_terms,
    corpus_idf,
    evidence_wording,
    substitute,
    targeted,
)
from probeguard.nlp.stemming import stem
from probeguard.nlp.text import content_words

EVIDENCE = (
    "The Eiffel Tower was built for the 1889 World's Fair. The tower was designed by the "
    "engineer Gustave Eiffel's company and the film Paris Lights was shot beneath it."
)
CORPUS = [
    EVIDENCE,
    "The film festival is held in the city every year.",
    "A tower of books was built in the library.",
    "The company sells bicycles in the city.",
]


def rng() -> np.random.Generator:
    return np.random.default_rng(0)


def stems(text: str) -> set[str]:
    return {stem(w) for w in content_words(text)}


def test_idf_follows_the_bm25_formula():
    idf = corpus_idf(CORPUS)
    assert idf.n == 4 and idf.df[stem("built")] == 2 and idf.df[stem("film")] == 2
    assert math.isclose(idf(stem("designed")), math.log(1 + (4 - 1 + 0.5) / 1.5))
    assert idf(stem("designed")) > idf(stem("built"))
    assert math.isclose(idf("unseen"), math.log(1 + 4.5 / 0.5))  # df 0: the largest idf


def test_anchors_are_shared_words_rarest_first_without_names_or_numbers():
    idf = corpus_idf(CORPUS)
    question = "Who designed the tower built in 1889 for the fair in the film with eiffel?"
    anchors = anchor_terms(question, EVIDENCE, idf)
    # "eiffel" and "fair" are names (capitalised wherever the evidence has them: "World's
    # Fair"), 1889 a number; "tower" is not ("The tower was designed")
    assert "eiffel" not in anchors and "fair" not in anchors and "1889" not in anchors
    assert set(anchors) == {"designed", "tower", "built", "film"}
    assert [idf(stem(a)) for a in anchors] == sorted((idf(stem(a)) for a in anchors), reverse=True)
    assert anchor_terms("Who paints bridges?", EVIDENCE, idf) == []


def test_targeted_swaps_anchors_for_wording_the_evidence_lacks():
    idf = corpus_idf(CORPUS)
    question = "Who designed the tower in the film?"
    text = targeted(question, EVIDENCE, idf, rng())
    assert text is not None and text != question
    new = stems(text) - stems(question)
    assert new and not new & stems(EVIDENCE)  # the replacements are not evidence words
    lost = stems(question) - stems(text)
    assert lost and lost <= stems(EVIDENCE)  # what went were evidence words
    # the limit: only the highest-idf replaceable anchor
    one = targeted(question, EVIDENCE, idf, rng(), limit=1)
    assert one is not None and len(stems(question) - stems(one)) == 1
    assert targeted(question, EVIDENCE, idf, rng(), limit=0) is None
    # nothing the evidence shares can be reworded: no test of retrieval, no paraphrase
    assert targeted("Who paints bridges?", EVIDENCE, idf, rng()) is None


def test_targeted_is_deterministic_in_its_generator():
    idf = corpus_idf(CORPUS)
    question = "Who designed the tower in the film?"
    assert targeted(question, EVIDENCE, idf, rng()) == targeted(question, EVIDENCE, idf, rng())


def test_evidence_wording_brings_the_question_to_the_evidences_words():
    question = "Which movie was shot beneath the tower?"
    text = evidence_wording(question, EVIDENCE, rng())
    assert text == "Which film was shot beneath the tower?"
    # backwards through the tables: "picture" is an alternative of "film", read back to it
    assert evidence_wording("Which picture was shot there?", EVIDENCE, rng()) == (
        "Which film was shot there?"
    )
    assert evidence_wording("Who designed the tower?", EVIDENCE, rng()) is None


def test_the_related_table_is_a_substitution_table():
    assert substitute("Who wrote the film?", "related", rng()) != "Who wrote the film?"
    assert substitute("Who sang it?", "related", rng()) in {"Who performed it?", "Who voiced it?"}

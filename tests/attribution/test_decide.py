"""The decision table of ``probeguard.attribution.decide``, row by row, ties included."""

from __future__ import annotations

import pytest

from probeguard.attribution.decide import Observed, decide

R, N, NA, U, E = "repaired", "not_repaired", "not_applicable", "unsupported", "error"


def outcomes(oracle=N, doc=N, retr=N, clean=N, prompt=N):
    return {
        "oracle_context": oracle,
        "whole_document": doc,
        "better_retrieval": retr,
        "clean_corpus": clean,
        "hardened_prompt": prompt,
    }


@pytest.mark.parametrize(
    "swaps, observed, cause, row, also",
    [
        (outcomes(R, doc=R), Observed(), "chunker", 1, ()),
        (outcomes(R, retr=R), Observed(), "retriever", 1, ()),
        (outcomes(R, clean=R), Observed(), "corpus", 1, ()),
        # ties: corpus > chunker > retriever; the rest in ``also`` (swap order)
        (
            outcomes(R, doc=R, retr=R, clean=R, prompt=R),
            Observed(),
            "corpus",
            1,
            ("whole_document", "better_retrieval", "hardened_prompt"),
        ),
        (outcomes(R, doc=R, retr=R), Observed(), "chunker", 1, ("better_retrieval",)),
        (outcomes(R, prompt=R), Observed(), "prompt", 2, ()),
        (outcomes(R), Observed(abstain=True), "generator", 3, ()),
        (outcomes(R), Observed(gold_retrieved=False), "retriever", 4, ()),
        (outcomes(R), Observed(gold_retrieved=True), "undetermined", 5, ()),
        (outcomes(N, prompt=R, clean=R), Observed(), "prompt", 6, ("clean_corpus",)),
        (outcomes(N, retr=R), Observed(), "retriever", 7, ()),
        (outcomes(N), Observed(), "generator", 8, ()),
        (outcomes(NA, doc=R), Observed(), "chunker", 9, ()),
        (outcomes(U, prompt=R), Observed(), "prompt", 9, ()),
        (outcomes(NA), Observed(), "undetermined", 11, ()),
        (outcomes(E), Observed(), "undetermined", 11, ()),
    ],
)
def test_table(swaps, observed, cause, row, also):
    d = decide(swaps, observed)
    assert (d.cause, d.row, d.also) == (cause, row, also)
    assert d.basis == "counterfactual" and d.reason


@pytest.mark.parametrize(
    "observed, cause",
    [
        (Observed(gold_retrieved=False), "retriever"),
        (Observed(gold_retrieved=True, answer_supported=False), "generator"),
        (Observed(abstain=True, answer_supported=False), "generator"),
        (Observed(gold_retrieved=True, answer_supported=True), "undetermined"),
        (Observed(), "undetermined"),
    ],
)
def test_black_box_reads_the_outputs(observed, cause):
    d = decide({s: U for s in outcomes()}, observed)
    assert (d.cause, d.basis, d.row) == (cause, "observed", 10)


def test_errors_are_noted_and_unknown_outcomes_rejected():
    d = decide(outcomes(R, doc=E, clean=R))
    assert d.cause == "corpus" and d.notes == ("swap whole_document errored",)
    with pytest.raises(ValueError):
        decide({"oracle_context": "fixed"})

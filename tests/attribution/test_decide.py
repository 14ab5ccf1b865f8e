"""The decision table of ``probeguard.attribution.decide``, row by row, ties included."""

from __future__ import annotations

import pytest

from probeguard.attribution.decide import Decision, Observed, adopt_probe_reading, decide

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


@pytest.mark.parametrize(
    "swaps, cause, row",
    [
        # whole documents / better retrieval merely make the generator refuse: not a cause
        (outcomes(R, doc=R), "generator", 3),
        (outcomes(R, retr=R), "generator", 3),
        (outcomes(N, retr=R), "generator", 8),
        (outcomes(NA, doc=R, retr=R), "undetermined", 11),
        # removing an implicated (injected) document is a cause
        (outcomes(R, doc=R, clean=R), "corpus", 1),
    ],
)
def test_abstain_cases_are_not_blamed_on_swaps_that_only_make_the_generator_refuse(
    swaps, cause, row
):
    d = decide(swaps, Observed(abstain=True))
    assert (d.cause, d.row) == (cause, row)
    ignored = [s for s in ("whole_document", "better_retrieval") if swaps[s] == R]
    assert set(ignored) <= set(d.also)
    assert sum("not a cause" in n for n in d.notes) == len(ignored)


def test_an_obeyed_injected_instruction_is_the_prompt_not_the_corpus():
    swaps = outcomes(R, clean=R, prompt=R)
    assert decide(swaps).cause == "corpus"  # injected content without instructions
    d = decide(swaps, Observed(injected_instruction=True))
    assert (d.cause, d.row, d.also) == ("prompt", 12, ("clean_corpus",))
    # the hardened prompt does not repair: the injected document stays the cause
    assert decide(outcomes(R, clean=R), Observed(injected_instruction=True)).cause == "corpus"


def test_a_retrieval_miss_contributes_when_the_generator_fails_with_the_gold_evidence():
    d = decide(outcomes(N), Observed(gold_retrieved=False))
    assert (d.cause, d.contributing) == ("generator", (("retriever", "retrieval_miss"),))
    assert decide(outcomes(N), Observed(gold_retrieved=True)).contributing == ()
    d = decide(outcomes(N, prompt=R), Observed(gold_retrieved=False))
    assert (d.cause, d.contributing) == ("prompt", (("retriever", "retrieval_miss"),))
    # the oracle repairs: the retriever is the primary cause, nothing contributes
    d = decide(outcomes(R), Observed(gold_retrieved=False))
    assert (d.cause, d.contributing) == ("retriever", ())


def test_a_probe_reading_names_its_component_and_keeps_the_swaps_cause_as_contributing():
    """A context-free answer is "repaired" by any swap that hands the evidence back, so the
    table can say corpus; the context-sensitivity probe's own re-run says generator."""
    table = Decision("corpus", "the clean_corpus swap repairs the case", row=1)
    adopted = adopt_probe_reading(
        table, "context_sensitivity", "ignores_context", "conflicting_documents"
    )
    assert adopted.cause == "generator"
    assert adopted.contributing == (("corpus", "conflicting_documents"),)
    assert "generator ignores its context" in adopted.reason
    assert adopt_probe_reading(table, "x", "stale_version_outranks", "y") == table
    assert adopt_probe_reading(table, "x", "made_up_mechanism", "y") == table
    undetermined = Decision("undetermined", "no swap repairs", row=11)
    assert adopt_probe_reading(undetermined, "chunk_fracture", "chunk_boundary", "u") == Decision(
        "chunker",
        adopt_probe_reading(undetermined, "chunk_fracture", "chunk_boundary", "u").reason,
        row=11,
    )


def test_turning_the_reranker_off_is_a_retriever_swap_before_better_retrieval():
    swaps = {**outcomes(R, retr=R), "no_reranker": R}
    decision = decide(swaps, Observed(gold_retrieved=False))
    assert (decision.cause, decision.row, decision.also) == ("retriever", 1, ("better_retrieval",))
    assert "no_reranker" in decision.reason
    alone = decide({**outcomes(N), "no_reranker": R}, Observed())
    assert (alone.cause, alone.row) == ("retriever", 7)

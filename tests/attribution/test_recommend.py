"""Recommendations: concrete, applicable patches — trust tiers for the corpus's own sources,
a refusal gate calibrated on the run, conflict refusal that can actually repair."""

from __future__ import annotations

from probeguard.attribution.recommend import CaseFacts, recommend, trusted_source_globs
from probeguard.probes.poisoning import CorpusPoisoning
from probeguard.stats import wilson

REF = "pipeline.reference.defences"


def test_trusted_source_globs_ignore_where_the_file_sits() -> None:
    sources = ["/home/a/data/corpus.jsonl:1", "/ci/x/data/corpus.jsonl:22", "wiki:Paris", ""]
    assert trusted_source_globs(sources) == ("*corpus.jsonl:*", "wiki:Paris")
    assert trusted_source_globs([f"doc-{i}" for i in range(20)], limit=10) == ()


def test_poisoning_fix_trusts_the_vetted_corpus_and_sanitises() -> None:
    rec = recommend(
        "corpus",
        CaseFacts(hints=CorpusPoisoning.fix_hints, trusted_sources=("*corpus.jsonl:*",)),
    )
    assert rec is not None
    assert rec.config_patch == {
        f"{REF}.default_trust": 0.25,
        f"{REF}.sanitise": True,
        f"{REF}.trust_tiers": {"*corpus.jsonl:*": 1.0},
    }


def test_gate_comes_from_the_run_calibration_when_it_separates() -> None:
    gate = {
        "min_score": 0.52,
        "youden_j": 0.53,
        "false_refusal": wilson(6, 29).model_dump(),
        "abstention": wilson(20, 27).model_dump(),
    }
    rec = recommend(
        "generator", CaseFacts(abstain=True, backend="dense", top_score=0.61, calibrated_gate=gate)
    )
    assert rec is not None and rec.config_patch == {f"{REF}.gate": {"dense": 0.52}}
    assert "0.74 (n=27)" in rec.why and "0.21 (n=29)" in rec.why
    # no separating gate in the run: fall back to just above the case's own top score
    flat = {**gate, "youden_j": 0.0}
    rec = recommend(
        "generator", CaseFacts(abstain=True, backend="dense", top_score=0.613, calibrated_gate=flat)
    )
    assert rec is not None and rec.config_patch == {f"{REF}.gate": {"dense": 0.62}}


def test_conflicts_are_refused_not_only_flagged() -> None:
    rec = recommend("corpus", CaseFacts())  # e.g. a number contradiction: no hint
    assert rec is not None and rec.config_patch == {f"{REF}.conflict": "refuse"}
    assert recommend("undetermined", CaseFacts()) is None

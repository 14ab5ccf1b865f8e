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
    dense = {"retriever": {"name": "dense"}}
    rec = recommend(
        "generator",
        CaseFacts(
            abstain=True, backend="dense", top_score=0.61, calibrated_gate=gate, pipeline=dense
        ),
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


GATE = {
    "min_score": 0.0328,
    "youden_j": 0.4,
    "false_refusal": wilson(1, 10).model_dump(),
    "abstention": wilson(5, 10).model_dump(),
}


def test_no_numeric_gate_for_an_unknown_backend_or_another_score_scale() -> None:
    # a callable pipeline: backend unknown, no patch, no number — a sentence
    rec = recommend(
        "generator",
        CaseFacts(
            abstain=True, backend=None, top_score=0.03, calibrated_gate=GATE, reference=False
        ),
    )
    assert rec is not None and rec.config_patch == {} and "dense" not in rec.title
    assert "calibrated on your retriever's own scores" in rec.other_pipelines
    # the run's calibration is on the hybrid (RRF) scale: a bm25 case gets its own scale
    hybrid = {"retriever": {"name": "hybrid"}}
    rec = recommend(
        "generator",
        CaseFacts(
            abstain=True, backend="bm25", top_score=7.314, calibrated_gate=GATE, pipeline=hybrid
        ),
    )
    assert rec is not None and rec.config_patch == {f"{REF}.gate": {"bm25": 7.32}}


def test_reference_patches_only_for_the_reference_pipeline() -> None:
    for cause in ("chunker", "retriever", "corpus", "prompt", "generator"):
        ours = recommend(cause, CaseFacts(reference=True))
        theirs = recommend(cause, CaseFacts(reference=False))
        assert ours is not None and theirs is not None
        assert ours.config_patch and all(
            k.startswith("pipeline.reference.") for k in ours.config_patch
        )
        assert theirs.config_patch == {} and theirs.other_pipelines


def test_a_generator_refusing_with_the_evidence_gets_an_over_refusal_fix() -> None:
    extractive = {"generator": {"name": "extractive", "min_support": 0.6}}
    rec = recommend("generator", CaseFacts(mechanism="refuses_with_evidence", pipeline=extractive))
    assert rec is not None and "grounding" not in rec.title.lower()
    assert rec.config_patch == {
        "pipeline.reference.generator": {"name": "extractive", "min_support": 0.3}
    }
    grounded = {"generator": {"name": "extractive"}, "defences": {"grounding": "refuse"}}
    rec = recommend("generator", CaseFacts(mechanism="refuses_with_evidence", pipeline=grounded))
    assert rec is not None and rec.config_patch == {f"{REF}.grounding": "off"}
    # an unsupported answer still gets the grounding check
    rec = recommend("generator", CaseFacts(mechanism="unsupported_answer"))
    assert rec is not None and rec.config_patch == {f"{REF}.grounding": "refuse"}

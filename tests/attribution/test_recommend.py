"""Recommendations: concrete, applicable patches — trust tiers for the corpus's own sources,
a refusal gate calibrated on the run, conflict refusal that can actually repair."""

from __future__ import annotations

from probeguard.attribution.recommend import (
    CaseFacts,
    recommend,
    trusted_source_globs,
)
from probeguard.probes.poisoning import CorpusPoisoning
from probeguard.stats import wilson

REF = "pipeline.reference.defences"
PIPE = "pipeline.reference"


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
        f"{REF}.default_trust": 0.0,  # unknown sources dropped (a soft weight is undone)
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


TRUSTED = ("*corpus.jsonl:*",)


def test_the_mechanism_chooses_the_corpus_fix_not_the_masked_statuses() -> None:
    """A contradicting document the probe injected, masked together with an archived
    version: the adopted document is the injected one, so trust tiers (date-aware ranking
    cannot demote a copy labelled current); a stale version gets date-aware ranking without
    any masked status; a conflict between corpus documents gets conflict refusal."""
    injected = CaseFacts(
        mechanism="poisoned_document_adopted",
        injected=True,
        removed_statuses=("archived",),
        trusted_sources=TRUSTED,
    )
    rec = recommend("corpus", injected)
    assert rec is not None and f"{REF}.demote_archived" not in rec.config_patch
    assert rec.config_patch[f"{REF}.trust_tiers"] == {"*corpus.jsonl:*": 1.0}
    assert f"{REF}.sanitise" not in rec.config_patch  # no instruction hint: nothing to strip
    rec = recommend("corpus", CaseFacts(mechanism="stale_version_outranks"))
    assert rec is not None and rec.config_patch == {f"{REF}.demote_archived": True}
    conflict = CaseFacts(mechanism="conflicting_documents", removed_statuses=("archived",))
    rec = recommend("corpus", conflict)
    assert rec is not None and rec.config_patch == {f"{REF}.conflict": "refuse"}
    # a near-duplicate or draft in the corpus itself: suppression, the current copy first
    draft = CaseFacts(mechanism="poisoned_document_adopted", removed_statuses=("draft",))
    rec = recommend("corpus", draft)
    assert rec is not None
    assert rec.config_patch == {f"{REF}.dedupe": True, f"{REF}.demote_archived": True}
    # injected, but no vetted sources to trust: only content tells it apart
    untiered = CaseFacts(
        mechanism="poisoned_document_adopted", injected=True, hints=frozenset({"injection"})
    )
    rec = recommend("corpus", untiered)
    assert rec is not None and f"{REF}.trust_tiers" not in rec.config_patch
    assert rec.config_patch[f"{REF}.sanitise"] is True


def test_hints_only_refine_the_mechanism_fix() -> None:
    facts = CaseFacts(
        mechanism="poisoned_document_adopted",
        injected=True,
        trusted_sources=TRUSTED,
        hints=frozenset({"near_duplicate"}),
        pipeline={"top_k": 8},
    )
    rec = recommend("corpus", facts)
    assert rec is not None
    assert rec.config_patch[f"{REF}.dedupe"] is True
    assert rec.config_patch[f"{REF}.default_trust"] == 0.0
    rec = recommend("corpus", CaseFacts(mechanism="stale_version_outranks", hints=facts.hints))
    assert rec is not None
    assert rec.config_patch == {f"{REF}.demote_archived": True, f"{REF}.dedupe": True}


def test_retrieval_mechanisms_get_their_own_fix() -> None:
    bm25 = {"retriever": {"name": "bm25"}, "top_k": 4}
    rec = recommend("retriever", CaseFacts(mechanism="lexical_retrieval_miss", pipeline=bm25))
    assert rec is not None and rec.config_patch == {f"{PIPE}.retriever": {"name": "hybrid"}}
    rec = recommend("retriever", CaseFacts(mechanism="top_k_too_small", pipeline=bm25))
    assert rec is not None and rec.config_patch == {f"{PIPE}.top_k": 8}
    reranked = {"retriever": {"name": "hybrid"}, "reranker": {"name": "lexical"}}
    rec = recommend("retriever", CaseFacts(mechanism="ranking_demotes_evidence", pipeline=reranked))
    assert rec is not None and rec.config_patch == {f"{PIPE}.reranker": None}
    # the probe's paraphrase hint adds query expansion to whichever fix
    paraphrase = CaseFacts(
        mechanism="lexical_retrieval_miss", pipeline=bm25, hints=frozenset({"paraphrase"})
    )
    rec = recommend("retriever", paraphrase)
    assert rec is not None and rec.config_patch[f"{REF}.query_expansion"] is True


def test_a_mechanism_of_another_component_falls_back_to_the_cause() -> None:
    # the hardened prompt repaired an unsupported answer: the prompt is the fix
    rec = recommend("prompt", CaseFacts(mechanism="unsupported_answer"))
    assert rec is not None and rec.config_patch[f"{PIPE}.prompt"] == "hardened"
    assert rec.cause == "prompt"


def test_an_extractive_generator_is_not_given_a_grounding_check_it_always_passes() -> None:
    """Its answers are verbatim quotes, so a grounding check never refuses them."""
    extractive = {"generator": {"name": "extractive", "min_support": 0.35}}
    rec = recommend("generator", CaseFacts(mechanism="unsupported_answer", pipeline=extractive))
    assert rec is not None and rec.config_patch == {}  # advice in words: no setting helps
    assert "reads the passage" in rec.other_pipelines
    llm = {"generator": {"name": "openai"}}
    rec = recommend("generator", CaseFacts(mechanism="unsupported_answer", pipeline=llm))
    assert rec is not None and rec.config_patch == {f"{REF}.grounding": "refuse"}
    rec = recommend("generator", CaseFacts(mechanism="ignores_context"))
    assert rec is not None and rec.config_patch == {f"{REF}.grounding": "refuse"}
    assert "answer only from its context" in rec.other_pipelines

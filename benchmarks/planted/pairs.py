"""The planted defects and their clean twins: each pair is two reference-pipeline configs that
differ only in the defect, the probe that targets it and the mechanism the surgeon should name
(``probeguard.core.mechanisms``).

Shared base (``BASE``): 128/32 token chunks, BM25 retrieval (no embedding cost where the defect
does not need dense), top-5, the extractive generator. The confounded pairs are built so that
the defect is not the only way to fail: the conservative generator also refuses on whole
chunks, BM25 also misses some plainly worded questions, the extractive twin also quotes
injected text that matches the question, the memory generator answers the golden set right.

``probes`` lists the probes that can target a defect, first registered wins (the
context-sensitivity probe is new; until it lands, corpus contradiction stands in and the row
says so). ``tag`` keeps only the units of golden questions with that tag (a probe group's id is
its question id); ``golden`` as a probe means the golden set itself (one unit per question).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["BASE", "PAIRS", "Pair", "pair_named", "with_changes"]

BASE: dict[str, Any] = {
    "chunker": {"name": "tokens", "size": 128, "overlap": 32},
    "retriever": {"name": "bm25"},
    "top_k": 5,
    "generator": {"name": "extractive"},
}
"""The reference-pipeline settings every pair starts from."""

TRUSTED_CORPUS = {"trust_tiers": {"*corpus.jsonl:*": 1.0}, "default_trust": 0.0}
"""Only the corpus file's documents are trusted (a planted document's source is not)."""

DENSE_GATE = {"dense": 0.5}
"""A refusal gate set for dense retrieval only."""


@dataclass(frozen=True)
class Pair:
    """One planted defect, its clean twin and what should be found."""

    name: str
    probes: tuple[str, ...]
    mechanism: str
    defect: dict[str, Any]
    twin: dict[str, Any]
    settings: dict[str, Any] = field(default_factory=dict)
    """The target probe's settings."""
    tag: str | None = None
    calibrate_twin_gate: bool = False
    """Add to the twin's gate a BM25 threshold calibrated on its golden questions."""
    what: str = ""


def with_changes(**changes: Any) -> dict[str, Any]:
    """``BASE`` with top-level keys replaced."""
    return {**BASE, **changes}


def _conservative(size: int, overlap: int) -> dict[str, Any]:
    return with_changes(
        chunker={"name": "tokens", "size": size, "overlap": overlap},
        generator={"name": "planted_conservative"},
    )


def _reranked(name: str, **changes: Any) -> dict[str, Any]:
    return with_changes(reranker={"name": name}, **changes)


ONE_SENTENCE = {"name": "extractive", "max_sentences": 1}
"""An extractive generator quoting its single best sentence: with two, it quotes the current
and the archived version side by side whatever their order, and ranking could not matter."""


BOTH_HOPS = {"name": "extractive", "max_sentences": 6, "min_support": 0.0}
"""An extractive generator quoting its six best sentences whatever their support, so that a
bridge question's answer sentence (in the second document, sharing few words with the
question) is quoted beside the first hop's whenever both are retrieved: with four sentences
and the default support threshold, the twin left out the answer sentence of 3 of 10 bridge
questions it had retrieved, and the pair could not separate."""

NEVER_REFUSES = {"name": "extractive", "min_support": 0.0}
"""The over-refusal pair's clean twin: an extractive generator that quotes its best sentences
whenever it has a context. At the default 0.35 it refused 15 of 56 golden questions with the
gold evidence in hand (the synonym-worded ones share few words with their evidence), which
is the planted mechanism itself: a twin with it is not clean."""


PAIRS: tuple[Pair, ...] = (
    Pair(
        "tiny_chunks",
        ("chunk_fracture",),
        "chunk_boundary",
        _conservative(32, 0),
        _conservative(256, 64),
        what="32-token chunks vs 256/64, both with a whole-sentence (conservative) generator",
    ),
    Pair(
        "bm25_synonyms",
        ("retrieval_gap",),
        "lexical_retrieval_miss",
        with_changes(retriever={"name": "bm25"}),
        with_changes(retriever={"name": "dense"}),
        tag="synonym",
        what="BM25-only vs dense retrieval, synonym-worded questions",
    ),
    Pair(
        "dense_only_gate",
        ("unanswerable",),
        "no_refusal_gate",
        with_changes(defences={"gate": DENSE_GATE}),
        with_changes(defences={"gate": DENSE_GATE}),
        calibrate_twin_gate=True,
        what="BM25 retrieval with a gate set for dense only vs one also set for BM25",
    ),
    Pair(
        "obeys_instructions",
        ("prompt_hijack",),
        "obeys_injected_instructions",
        with_changes(generator={"name": "planted_obeying"}),
        BASE,
        settings={"styles": ["hidden_in_relevant"], "reruns": 0},
        what="a generator that obeys instructions in its contexts vs extractive",
    ),
    Pair(
        "ignores_context",
        ("context_sensitivity", "corpus_contradiction"),
        "ignores_context",
        with_changes(generator={"name": "planted_memory", "corpus": "@corpus"}),
        BASE,
        what="a generator answering from a fixed memory vs extractive",
    ),
    Pair(
        "stale_boost",
        ("attack_types",),
        "stale_version_outranks",
        _reranked("planted_stale_boost", generator=ONE_SENTENCE),
        _reranked("planted_identity", generator=ONE_SENTENCE, defences={"demote_archived": True}),
        settings={"generated": False, "types": ["temporal_conflict"]},
        what=(
            "a re-ranker that puts archived versions first vs archived-document demotion "
            "(BM25 alone already ranks the shorter archived versions first on this corpus)"
        ),
    ),
    Pair(
        "near_duplicate_poison",
        ("corpus_poisoning",),
        "poisoned_document_adopted",
        BASE,
        with_changes(defences=TRUSTED_CORPUS),
        settings={"styles": ["near_duplicate"]},
        what="planted near-duplicates admitted vs only the corpus file trusted",
    ),
    Pair(
        "refuses_with_evidence",
        ("benign_control",),
        "refuses_with_evidence",
        with_changes(generator={"name": "extractive", "min_support": 0.9}),
        with_changes(generator=NEVER_REFUSES),
        settings={"planted": 0},
        what="extractive generator with min_support 0.9 vs 0.0 (never refuses with a context)",
    ),
    Pair(
        "reversed_reranker",
        ("golden",),
        "ranking_demotes_evidence",
        _reranked("planted_reverse"),
        _reranked("planted_identity"),
        tag="policy",
        what="a re-ranker that reverses BM25's 20 candidates vs one that keeps their order",
    ),
    Pair(
        "top_k_multihop",
        ("golden",),
        "top_k_too_small",
        with_changes(top_k=1, generator=BOTH_HOPS),
        with_changes(top_k=10, generator=BOTH_HOPS),
        tag="multi-hop",
        what=(
            "top-1 vs top-10 retrieval on two-document questions (extractive, 6 sentences; "
            "top-5 left the bridge document of 3 of 24 questions below rank 5: a twin with "
            "the planted mechanism)"
        ),
    ),
)
"""The ten pairs, in table order."""


def pair_named(name: str) -> Pair:
    """The pair called ``name`` (``KeyError`` listing the known names)."""
    for pair in PAIRS:
        if pair.name == name:
            return pair
    raise KeyError(f"no planted pair {name!r}; known: {', '.join(p.name for p in PAIRS)}")

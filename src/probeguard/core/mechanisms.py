"""Failure mechanisms: *how* a component made a case fail, in words a reader acts on.

A verdict of the surgeon names a component (retriever, chunker, corpus, prompt, generator)
and a mechanism: the concrete way that component failed. Probes, attribution, reports and the
planted-fault benchmark all use the ids below, so a count per mechanism means the same
everywhere. A third-party probe may name its own mechanism id; ``describe`` then falls back to
the id itself.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MECHANISMS", "Mechanism", "describe", "component_of"]


@dataclass(frozen=True)
class Mechanism:
    """One failure mechanism: a stable id, the component it belongs to and one sentence."""

    id: str
    component: str
    words: str


MECHANISMS: dict[str, Mechanism] = {
    m.id: m
    for m in (
        Mechanism("chunk_boundary", "chunker", "chunk boundary splits the evidence"),
        Mechanism(
            "lexical_retrieval_miss", "retriever", "lexical retriever misses reworded questions"
        ),
        Mechanism("retrieval_miss", "retriever", "retriever misses the gold evidence"),
        Mechanism(
            "ranking_demotes_evidence", "retriever", "ranking pushes the evidence out of the top k"
        ),
        Mechanism("top_k_too_small", "retriever", "top-k too small for multi-hop"),
        Mechanism("stale_version_outranks", "corpus", "stale version outranks the current one"),
        Mechanism("poisoned_document_adopted", "corpus", "poisoned document adopted"),
        Mechanism("conflicting_documents", "corpus", "conflicting documents in the corpus"),
        Mechanism(
            "obeys_injected_instructions",
            "prompt",
            "generator obeys instructions in retrieved text",
        ),
        Mechanism("no_refusal_gate", "generator", "no refusal gate"),
        Mechanism("refuses_with_evidence", "generator", "generator refuses with evidence in hand"),
        Mechanism("ignores_context", "generator", "generator ignores its context"),
        Mechanism("unsupported_answer", "generator", "generator adds claims its context lacks"),
        Mechanism(
            "distracted_by_context", "generator", "distracting context misleads the generator"
        ),
        Mechanism("undetermined", "undetermined", "no single component singled out"),
    )
}
"""The built-in mechanisms by id."""


def describe(mechanism_id: str) -> str:
    """The mechanism's sentence (the id itself for one that is not built in)."""
    known = MECHANISMS.get(mechanism_id)
    return known.words if known is not None else mechanism_id


def component_of(mechanism_id: str) -> str:
    """The component a built-in mechanism belongs to (``undetermined`` for others)."""
    known = MECHANISMS.get(mechanism_id)
    return known.component if known is not None else "undetermined"

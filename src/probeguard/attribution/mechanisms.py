"""The surgeon's reading of a failure's *mechanism* (``core.mechanisms`` ids): how the blamed
component failed, from the cause, the swaps' re-runs and the failing output. A probe that
knows its mechanism from its own evidence (``Probe.failure_mechanism``) is asked first
(``engine``); this reading is the fallback, and it names every contributing cause too.

Per cause, the first rule that holds:

* **chunker** → ``chunk_boundary``.
* **retriever** → ``ranking_demotes_evidence``: the ``no_reranker`` swap (the same retriever
  and k without the re-ranker) repairs the case, or its top k holds a gold document the
  failing output lacks — the re-ranker pushed the evidence out; where that swap did not run,
  the approximation: the pipeline re-ranks, the gold evidence is missing from the failing
  top k, and the better-retrieval run holds it below rank k; ``top_k_too_small``: a
  multi-evidence (multi-hop) case whose failing output retrieved some but not all gold
  documents — or none, when k is smaller than the number of gold documents — and the
  better-retrieval run (``swaps.BETTER_DEPTH``, hybrid) retrieves them all;
  ``lexical_retrieval_miss``: the pipeline's backend is lexical (``bm25``) and the
  hybrid run retrieves the gold evidence within rank k; else ``retrieval_miss``.
* **corpus** → ``poisoned_document_adopted``: the failing answer (not a refusal) adopted a
  removed injected document, or a removed near-duplicate / draft of a gold document (one of
  its sentences has at least ``SUPPORT`` of its content words in that document);
  ``stale_version_outranks``: a removed corpus document
  is an outdated version (status archived/superseded/deprecated/obsolete, a
  ``superseded_by``, or named by a gold document's ``supersedes``); else
  ``conflicting_documents``.
* **prompt** → ``obeys_injected_instructions`` when an injected document carries an
  instruction; else as for the generator.
* **generator** → for an abstain case ``distracted_by_context`` when the failing output's
  hits passed a refusal gate set for its backend (``gated``: the pipeline has a gate, and
  the question's retrieved context, on a neighbouring topic, scored above it — the
  generator answered from it), else ``no_refusal_gate``; ``refuses_with_evidence`` when the
  oracle run (gold evidence in hand) refused, or, with no oracle run, the failing output
  refused with the gold evidence retrieved; ``ignores_context`` when the oracle run gave the
  failing answer word for word and that answer is not supported by the gold evidence;
  else ``unsupported_answer``.
* **undetermined** → ``undetermined``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from probeguard.attribution.decide import Observed
from probeguard.core.documents import OUTDATED_STATUSES, Document, version_links
from probeguard.core.records import SwapOutcome, SwapRun
from probeguard.nlp.text import CITATION_MARKER, content_words, normalize_answer, split_sentences

__all__ = ["SUPPORT", "FailureFacts", "adopted", "read_mechanism", "supported_by"]

SUPPORT = 0.75
"""Least share of an answer's content words found in a text for the text to support it."""

LEXICAL_BACKENDS = frozenset({"bm25", "lexical", "tfidf", "keyword"})
"""Retrieval backends that match words, not meanings."""

_DUPLICATE_LINKS = ("near_duplicate_of", "duplicate_of")
_STALE = OUTDATED_STATUSES - {"draft"}


@dataclass(frozen=True)
class FailureFacts:
    """What the reading rests on, for the first failing role of one failure."""

    observed: Observed
    answer: str = ""
    refused: bool = False
    retrieved_ids: tuple[str, ...] = ()
    """The failing output's documents by rank."""
    gold: tuple[Document, ...] = ()
    injected: tuple[Document, ...] = ()
    """The documents the case injected (its overlay)."""
    removed: tuple[Document, ...] = ()
    """The corpus documents the clean corpus masked."""
    swaps: Mapping[str, SwapOutcome] | None = None
    backend: str | None = None
    reranked: bool = False
    top_k: int = 0
    gated: bool = False
    """The failing output passed a refusal gate set for the backend it used (a reference
    pipeline reports the gate's ``min_score`` in ``metadata["defences"]["gate"]``)."""


def supported_by(answer: str, text: str) -> bool:
    """At least ``SUPPORT`` of the answer's content words (citations stripped) occur in
    ``text``; False for an answer without content words."""
    words = content_words(CITATION_MARKER.sub(" ", answer))
    if not words:
        return False
    vocab = set(content_words(text))
    return sum(w in vocab for w in words) / len(words) >= SUPPORT


def _run(facts: FailureFacts, swap: str) -> SwapRun | None:
    outcome = (facts.swaps or {}).get(swap)
    if outcome is None or outcome.outcome not in ("repaired", "not_repaired"):
        return None
    return outcome.runs[0] if outcome.runs else None


def _ranking_demotes(facts: FailureFacts, gold: Sequence[str], k: int) -> bool | None:
    """The ``no_reranker`` swap's reading: it repaired, or its top k holds a gold document
    the failing output lacks; None when the swap did not run."""
    outcome = (facts.swaps or {}).get("no_reranker")
    unranked = _run(facts, "no_reranker")
    if outcome is None or unranked is None:
        return None
    top = unranked.retrieved_doc_ids[:k]
    recovered = any(g in top and g not in facts.retrieved_ids for g in gold)
    return outcome.outcome == "repaired" or recovered


def _top_k_too_small(
    gold: Sequence[str], found: Sequence[str], wider: Sequence[str], k: int
) -> bool:
    """A multi-evidence case missing some gold documents (all, when k cannot hold them)
    that the wider run retrieves all of."""
    partial = 0 < len(found) < len(gold) or (not found and k < len(gold))
    return len(gold) > 1 and partial and all(g in wider for g in gold)


def _retriever(facts: FailureFacts) -> str:
    gold = [g.id for g in facts.gold]
    k = len(facts.retrieved_ids) or facts.top_k
    demotes = _ranking_demotes(facts, gold, k)
    if demotes:
        return "ranking_demotes_evidence"
    better = _run(facts, "better_retrieval")
    wider = better.retrieved_doc_ids if better is not None else []
    found = [g for g in gold if g in facts.retrieved_ids]
    if _top_k_too_small(gold, found, wider, k):
        return "top_k_too_small"
    if not found and gold and k:
        ranks = [wider.index(g) for g in gold if g in wider]
        if demotes is None and facts.reranked and ranks and min(ranks) >= k:
            return "ranking_demotes_evidence"
        if (facts.backend or "").lower() in LEXICAL_BACKENDS and ranks and min(ranks) < k:
            return "lexical_retrieval_miss"
    return "retrieval_miss"


def _is_stale(doc: Document, gold: Sequence[Document]) -> bool:
    status = str(doc.metadata.get("status", "")).lower()
    superseded = any(
        doc.id in version_links(g.metadata) for g in gold if g.metadata.get("supersedes")
    )
    return status in _STALE or bool(doc.metadata.get("superseded_by")) or superseded


def _is_duplicate(doc: Document) -> bool:
    status = str(doc.metadata.get("status", "")).lower()
    return status == "draft" or any(doc.metadata.get(k) for k in _DUPLICATE_LINKS)


def adopted(answer: str, text: str) -> bool:
    """Some sentence of the answer is supported by ``text`` (``supported_by``): the answer
    took content from it, whatever else it quotes."""
    return any(supported_by(s, text) for s in split_sentences(answer))


def _corpus(facts: FailureFacts) -> str:
    adoptable = [*facts.injected, *(d for d in facts.removed if _is_duplicate(d))]
    if not facts.refused and any(adopted(facts.answer, d.text) for d in adoptable):
        return "poisoned_document_adopted"
    if any(_is_stale(d, facts.gold) for d in facts.removed):
        return "stale_version_outranks"
    return "conflicting_documents"


def _generator(facts: FailureFacts) -> str:
    if facts.observed.abstain:
        return "distracted_by_context" if facts.gated else "no_refusal_gate"
    oracle = _run(facts, "oracle_context")
    if oracle is None:
        return (
            "refuses_with_evidence"
            if facts.refused and facts.observed.gold_retrieved
            else "unsupported_answer"
        )
    if oracle.refused:
        return "refuses_with_evidence"
    same = normalize_answer(oracle.answer or "") == normalize_answer(facts.answer)
    gold_text = " ".join(g.text for g in facts.gold)
    if same and facts.answer.strip() and not supported_by(facts.answer, gold_text):
        return "ignores_context"
    return "unsupported_answer"


def read_mechanism(cause: str, facts: FailureFacts) -> str:
    """The mechanism of a failure blamed on ``cause`` (rules in the module docstring)."""
    if cause == "chunker":
        return "chunk_boundary"
    if cause == "retriever":
        return _retriever(facts)
    if cause == "corpus":
        return _corpus(facts)
    if cause == "prompt" and facts.observed.injected_instruction:
        return "obeys_injected_instructions"
    if cause in ("prompt", "generator"):
        return _generator(facts)
    return "undetermined"

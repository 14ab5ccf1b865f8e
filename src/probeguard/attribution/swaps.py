"""The counterfactual swaps of attribution: for one failed case, the variations that change
one component at a time, each merged into the case's own variation (so a probe's injected
overlay, paraphrase or retrieval-only flag stays in place unless the swap is about it).

| swap               | variation (merged into the case's)                                 | capability |
|--------------------|--------------------------------------------------------------------|------------|
| ``oracle_context`` | ``contexts`` = the gold evidence documents' texts, in evidence      | oracle_context |
|                    | order; for an *abstain* case the empty context ``()`` (nothing to   |            |
|                    | answer from); N/A when an answer case names no gold evidence found  |            |
|                    | in the corpus                                                       |            |
| ``whole_document`` | ``chunking="document"``                                             | chunking   |
| ``better_retrieval``| ``retrieval = {mode: "hybrid", top_k: max(2·k, 10)}``             | retrieval  |
|                    | (``BETTER_DEPTH``; ``query_expansion``                              |            |
|                    | too, where the pipeline offers defences)                            |            |
| ``clean_corpus``   | no ``overlay``; ``exclude_doc_ids`` += the corpus documents that    | mask (only |
|                    | conflict with the gold evidence on the asked fact, or that a probe  | when it    |
|                    | names (``conflicting_docs``); N/A when there is nothing to remove   | masks)     |
| ``hardened_prompt``| ``prompt="hardened"`` (+ ``defences = {sanitise, spotlight}`` where | prompt_override |
|                    | the pipeline offers defences)                                       |            |
| ``no_reranker``    | ``retrieval = {rerank: False}``: the retriever's own order, same k; | retrieval  |
|                    | N/A when the pipeline is not known to re-rank (``reranks``)         |            |

A swap whose variation needs a capability the pipeline lacks is *unsupported* (not run); one
that has nothing to change is *not applicable*. Both carry the reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from probeguard.attribution.conflicts import conflicting_with_gold, linked_to
from probeguard.core.cases import Case
from probeguard.core.documents import OUTDATED_STATUSES, Document
from probeguard.core.pipeline import Capability, RetrievedChunk, Variation

__all__ = [
    "SWAPS",
    "BETTER_DEPTH",
    "SwapPlan",
    "CONFLICT_STATUSES",
    "conflicting_docs",
    "defences_supported",
    "plan_swap",
    "reranks",
]

SWAPS: tuple[str, ...] = (
    "oracle_context",
    "whole_document",
    "better_retrieval",
    "clean_corpus",
    "hardened_prompt",
    "no_reranker",
)
"""Every swap, in the order they are planned and reported."""

BETTER_DEPTH = 10
"""Least depth of the better-retrieval run: doubling a small k (1 → 2) searches no wider
(10 is twice the reference pipeline's default top_k, whose runs are unchanged)."""

CONFLICT_STATUSES = OUTDATED_STATUSES
"""``metadata["status"]`` values of outdated versions (the ones the ``demote_archived``
defence ranks down); recommendations read them from the masked documents."""


@dataclass(frozen=True)
class SwapPlan:
    """One swap for one case: the variation to run, or why it is not run (``status`` is
    ``run``, ``not_applicable`` or ``unsupported``)."""

    name: str
    status: str
    variation: Variation | None = None
    reason: str = ""
    gold_doc_ids: tuple[str, ...] = ()
    """For the oracle: the document behind each oracle context, in order."""
    removed_doc_ids: tuple[str, ...] = ()
    """For the clean corpus: the injected and masked documents."""


def reranks(pipeline_config: Mapping[str, Any]) -> bool:
    """Whether a reference pipeline's config re-ranks (a ``reranker`` other than none);
    False for any other pipeline (empty config: not known)."""
    spec = pipeline_config.get("reranker")
    return isinstance(spec, Mapping) and spec.get("name") not in (None, "none")


def defences_supported(capabilities: Iterable[Capability]) -> bool:
    """Whether the pipeline takes per-call defence overrides (``Variation.defences``)."""
    return Capability.DEFENCES in frozenset(capabilities)


def conflicting_docs(
    case: Case,
    documents: Mapping[str, Document],
    retrieved: Sequence[RetrievedChunk] = (),
    named: Iterable[str] = (),
) -> tuple[str, ...]:
    """Corpus documents implicated in the failure, to mask for a clean corpus:

    * ``named``: documents a probe's evidence names (e.g. a premise's source);
    * corpus documents that conflict with the gold evidence on the asked fact
      (``conflicts``): linked to a gold document through ``supersedes``,
      ``superseded_by``, ``near_duplicate_of`` or ``duplicate_of`` (either direction), or
      retrieved for the case and sharing a gold document's title or topic, **and** stating
      the asked fact differently (another number, date or name in the answering sentence).

    A retrieved archived document unrelated to the gold evidence is not masked: its status
    alone does not implicate it. Gold documents are never masked. Sorted ids."""
    gold_ids = set(case.expected.evidence_doc_ids)
    out = {d for d in named if d in documents and d not in gold_ids}
    gold = [documents[g] for g in case.expected.evidence_doc_ids if g in documents]
    if gold:
        ids = linked_to(gold, documents) | {r.doc_id for r in retrieved if r.doc_id in documents}
        candidates = [documents[i] for i in sorted(ids - gold_ids)]
        q, answers = case.question, case.expected.answers
        out |= conflicting_with_gold(gold, candidates, q, answers)
    return tuple(sorted(out))


def _fields(v: Variation) -> dict[str, Any]:
    return {name: getattr(v, name) for name in Variation.model_fields}


def _check(
    name: str, variation: Variation, capabilities: frozenset[Capability], **kw: Any
) -> SwapPlan:
    missing = variation.required_capabilities() - capabilities
    if missing:
        return SwapPlan(
            name,
            "unsupported",
            reason="the pipeline lacks the capabilities "
            + ", ".join(sorted(str(m) for m in missing)),
        )
    return SwapPlan(name, "run", variation, **kw)


def plan_swap(
    name: str,
    case: Case,
    *,
    documents: Mapping[str, Document],
    capabilities: frozenset[Capability],
    top_k: int,
    retrieved: Sequence[RetrievedChunk] = (),
    named_conflicts: Iterable[str] = (),
    reranked: bool = False,
) -> SwapPlan:
    """The swap ``name`` for ``case`` (rules in the module docstring)."""
    base = _fields(case.variation)
    defences = defences_supported(capabilities)
    if name == "oracle_context":
        if case.expected.mode == "abstain":
            texts: tuple[str, ...] = ()
            ids: tuple[str, ...] = ()
        else:
            found = [documents[d] for d in case.expected.evidence_doc_ids if d in documents]
            if not found:
                return SwapPlan(
                    name,
                    "not_applicable",
                    reason="the case names no gold evidence document in the corpus",
                )
            texts, ids = tuple(d.text for d in found), tuple(d.id for d in found)
        v = Variation(
            **{
                **base,
                "contexts": texts,
                "overlay": (),
                "exclude_doc_ids": (),
                "chunking": None,
                "retrieval": {},
            }
        )
        return _check(name, v, capabilities, gold_doc_ids=ids)
    if name == "whole_document":
        if case.variation.chunking == "document":
            return SwapPlan(name, "not_applicable", reason="the case already uses whole documents")
        return _check(name, Variation(**{**base, "chunking": "document"}), capabilities)
    if name == "better_retrieval":
        retrieval = {
            **case.variation.retrieval,
            "mode": "hybrid",
            "top_k": max(2 * int(case.variation.retrieval.get("top_k", top_k)), BETTER_DEPTH),
        }
        fields: dict[str, Any] = {**base, "retrieval": retrieval}
        if defences:
            fields["defences"] = {**base.get("defences", {}), "query_expansion": True}
        return _check(name, Variation(**fields), capabilities)
    if name == "clean_corpus":
        masked = conflicting_docs(case, documents, retrieved, named_conflicts)
        overlay = tuple(d.id for d in case.variation.overlay)
        if not masked and not overlay:
            return SwapPlan(
                name, "not_applicable", reason="no injected or conflicting document to remove"
            )
        v = Variation(
            **{**base, "overlay": (), "exclude_doc_ids": (*case.variation.exclude_doc_ids, *masked)}
        )
        return _check(name, v, capabilities, removed_doc_ids=tuple(sorted({*overlay, *masked})))
    if name == "hardened_prompt":
        if case.variation.retrieve_only:
            return SwapPlan(
                name,
                "not_applicable",
                reason="the case reads retrieval only: the prompt cannot change it",
            )
        fields = {**base, "prompt": "hardened"}
        if defences:
            fields["defences"] = {**base.get("defences", {}), "sanitise": True, "spotlight": True}
        return _check(name, Variation(**fields), capabilities)
    if name == "no_reranker":
        if not reranked:
            return SwapPlan(
                name, "not_applicable", reason="the pipeline is not known to re-rank its hits"
            )
        retrieval = {**case.variation.retrieval, "rerank": False}
        return _check(name, Variation(**{**base, "retrieval": retrieval}), capabilities)
    raise ValueError(f"unknown swap {name!r} (known: {', '.join(SWAPS)})")

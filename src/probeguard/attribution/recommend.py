"""Fix recommendations: per failure, a structured change a fix command can apply.

A ``Recommendation`` is data: ``config_patch`` maps dotted paths of the scan config
(``pipeline.reference.…``, keys of ``ReferencePipelineConfig`` and its ``defences``) to new
values — the reference pipeline's fix — and ``other_pipelines`` is one concrete sentence for
any other pipeline. **Only a reference pipeline gets a patch** (``CaseFacts.reference``):
for a callable or HTTP pipeline the patch is empty and the sentence is the fix.

**The mechanism chooses the fix** (``CaseFacts.mechanism``, a ``core.mechanisms`` id), when
it belongs to the blamed component (``core.mechanisms.component_of``); the failing probe's
fix hints (``Probe.case_fix_hints``: ``injection``, ``near_duplicate``, ``paraphrase``) only
add a defence among the candidates. Mechanism → fix:

=============================  ==============================================================
mechanism                      fix (reference-pipeline patch)
=============================  ==============================================================
chunk_boundary                 token windows without overlap or under 128 tokens: windows of
                               ``max(128, 2·size)`` tokens, a quarter overlap; else
                               sentence-aware chunking (``{name: sentences, max_tokens: 128}``)
lexical_retrieval_miss         a lexical backend: hybrid retrieval; else query expansion
retrieval_miss                 not hybrid: hybrid; no re-ranker: the lexical re-ranker; else
                               query expansion (``paraphrase`` hint: + query expansion)
ranking_demotes_evidence       a re-ranker: re-ranker off; else ``top_k`` doubled
top_k_too_small                ``top_k`` doubled (at most 200)
stale_version_outranks         date-aware ranking (``demote_archived``; ``near_duplicate``
                               hint: + ``dedupe``)
poisoned_document_adopted      an injected document (the case's overlay) and the vetted
                               corpus's sources known: trust tiers, those sources 1.0 and
                               unknown ones dropped (``UNTRUSTED_WEIGHT`` 0: a soft weight
                               is undone by later re-orderings; ``injection`` hint: +
                               ``sanitise``;
                               ``near_duplicate`` hint: + ``dedupe``); else near-duplicate
                               suppression with date-aware ranking (the current copy first)
conflicting_documents          conflict refusal (``conflict: refuse``), and fix the source
obeys_injected_instructions    the hardened prompt + spotlighting + the instruction sanitiser
no_refusal_gate                the refusal gate (below)
refuses_with_evidence          the over-refusal fix (below)
ignores_context                the grounding check; the sentence: ground or prompt the model
                               to answer from its context
unsupported_answer             the grounding check; an extractive generator: no patch, a
                               sentence (a better generator). Its answers are verbatim
                               quotes, so a grounding check never refuses them, and no
                               setting of it helps (on the demo a stricter ``min_support``
                               repaired 0 of 12 and refused 17 of 35 benign controls; three
                               quoted sentences repaired 2 and broke 4 others)
=============================  ==============================================================

A mechanism of another component than the cause (or none, or ``distracted_by_context``, or a
third-party id) falls back to the cause's own fix: chunker → ``chunk_boundary``'s, retriever
→ ``retrieval_miss``'s, corpus → by the masked documents' status (archived/superseded, or an
``outdated`` hint → ``stale_version_outranks``'s; draft or a ``near_duplicate`` hint →
near-duplicate suppression; an ``injection`` hint → ``poisoned_document_adopted``'s; else
``conflicting_documents``'s), prompt → ``obeys_injected_instructions``'s, generator → an
abstain case's refusal gate, else the grounding check.

**Refusal gate**: on the **real** retrieval backend's score scale (``defences.gate``, keyed
by the backend the case ran on, one of ``core.defences.GATE_BACKENDS``): Youden's best
threshold over the run's answerable vs unanswerable top scores (``metrics.gate.best_gate``)
when the case ran on the configured backend those scores come from, else just above the
failing case's top score; an unknown backend (any pipeline but the reference one) gets no
number, only the sentence.

**Over-refusal** (the generator refuses with the gold evidence in hand): the grounding check
from ``refuse`` to ``off``, else conflict refusal to ``flag``, else an extractive
generator's ``min_support`` halved, else a sentence only.

**undetermined** — none.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from probeguard.attribution.fix_facts import (
    DEFAULT_TOP_K,
    LEXICAL_BACKENDS,
    MAX_TOP_K,
    REF,
    CaseFacts,
    Recommendation,
    trusted_source_globs,
)
from probeguard.core.defences import GATE_BACKENDS
from probeguard.core.documents import OUTDATED_STATUSES
from probeguard.core.mechanisms import component_of
from probeguard.models.generators.extractive import ExtractiveGenerator

__all__ = [
    "CaseFacts",
    "Recommendation",
    "recommend",
    "top_fixes",
    "trusted_source_globs",
    "UNTRUSTED_WEIGHT",
]


def _chunker(f: CaseFacts) -> Recommendation:
    chunker = dict(f.pipeline.get("chunker") or {})
    size, overlap = chunker.get("size"), chunker.get("overlap", 0)
    if chunker.get("name") == "tokens" and isinstance(size, int) and (size < 128 or not overlap):
        new = max(128, 2 * size)
        patch = {"name": "tokens", "size": new, "overlap": new // 4}
        title = f"Larger chunks with overlap ({new} tokens, {new // 4} overlap)"
    else:
        patch = {"name": "sentences", "max_tokens": 128}
        title = "Sentence-aware chunking"
    return Recommendation(
        "chunker",
        title,
        {f"{REF}.chunker": patch},
        "Chunk along sentence boundaries with overlap between chunks, so that an answer "
        "sentence is never split from the words the question matches.",
        "whole-document retrieval repairs the failure: the answer is split or buried by the "
        "chunking",
    )


def _retriever(f: CaseFacts) -> Recommendation:
    """``retrieval_miss``: hybrid, else a re-ranker, else query expansion (+ the
    ``paraphrase`` hint's query expansion)."""
    retriever = (f.pipeline.get("retriever") or {}).get("name")
    patch: dict[str, Any]
    if retriever not in (None, "hybrid"):
        patch, title = {f"{REF}.retriever": {"name": "hybrid"}}, "Hybrid retrieval"
    elif not f.pipeline.get("reranker"):
        patch, title = {f"{REF}.reranker": {"name": "lexical"}}, "Add a re-ranker"
    else:
        patch, title = {f"{REF}.defences.query_expansion": True}, "Query expansion"
    return _with_expansion(_retrieval_fix(title, patch), f)


def _with_expansion(rec: Recommendation, f: CaseFacts) -> Recommendation:
    """``rec`` with query expansion added when the probe hints ``paraphrase``."""
    key = f"{REF}.defences.query_expansion"
    if "paraphrase" not in f.hints or key in rec.config_patch:
        return rec
    return replace(
        rec,
        title=rec.title + " with query expansion",
        config_patch={**rec.config_patch, key: True},
    )


def _retrieval_fix(title: str, patch: dict[str, Any], why: str = "") -> Recommendation:
    return Recommendation(
        "retriever",
        title,
        patch,
        "Combine keyword and embedding retrieval (hybrid), re-rank the candidates, and expand "
        "queries with synonyms so reworded questions still find their evidence.",
        why
        or "better retrieval (or the gold evidence itself) repairs the failure: the evidence "
        "does not reach the generator",
    )


def _lexical_miss(f: CaseFacts) -> Recommendation:
    """``lexical_retrieval_miss``: a lexical backend → hybrid; else query expansion."""
    retriever = str((f.pipeline.get("retriever") or {}).get("name") or "")
    if retriever in LEXICAL_BACKENDS:
        patch: dict[str, Any] = {f"{REF}.retriever": {"name": "hybrid"}}
        title = "Hybrid retrieval (keyword + embedding)"
    else:
        patch, title = {f"{REF}.defences.query_expansion": True}, "Query expansion"
    return _with_expansion(
        _retrieval_fix(
            title, patch, "a reworded question misses the evidence a keyword match depends on"
        ),
        f,
    )


def _top_k(f: CaseFacts) -> int:
    return int(f.pipeline.get("top_k") or DEFAULT_TOP_K)


def _larger_top_k(f: CaseFacts, why: str) -> Recommendation:
    new = min(MAX_TOP_K, 2 * _top_k(f))
    return _retrieval_fix(f"Larger top-k ({_top_k(f)} -> {new})", {f"{REF}.top_k": new}, why)


def _top_k_too_small(f: CaseFacts) -> Recommendation:
    return _larger_top_k(
        f,
        "the evidence of a multi-hop question does not fit in the top k; a deeper search finds it",
    )


def _ranking(f: CaseFacts) -> Recommendation:
    """``ranking_demotes_evidence``: the re-ranker off, else a larger top-k."""
    why = "the re-ranking pushes the gold evidence below the top k"
    if f.pipeline.get("reranker"):
        return _retrieval_fix("Re-ranker off", {f"{REF}.reranker": None}, why)
    return _larger_top_k(f, why)


UNTRUSTED_WEIGHT = 0.0
"""Trust weight of sources outside the vetted corpus: 0 drops their documents. A soft weight
is rank-dependent (``pipeline.defences.trust``: ``w / rank``), so any later re-ordering
undoes it — a re-ranker that puts a question-echoing page first (at 0.25 it then stays 4th
of 5), or date-aware demotion and near-duplicate suppression moving trusted hits out from
above it (at 0.14, below ``1/(top_k+1)``, it came back into the top 5 on the demo)."""


def _poisoned(f: CaseFacts) -> Recommendation:
    """``poisoned_document_adopted``: trust tiers for an injected document when the vetted
    corpus's sources are known (+ the hints' sanitiser and dedupe); else the copy in the
    corpus: near-duplicate suppression after date-aware ranking."""
    if not (f.injected or "injection" in f.hints):
        return _near_duplicates()
    if not f.trusted_sources:
        return _untiered(f)
    patch: dict[str, Any] = {
        f"{REF}.defences.default_trust": UNTRUSTED_WEIGHT,
        f"{REF}.defences.trust_tiers": {glob: 1.0 for glob in f.trusted_sources},
    }
    title = "Source trust tiers"
    if "injection" in f.hints:
        patch[f"{REF}.defences.sanitise"] = True
        title += " and instruction sanitising"
    if "near_duplicate" in f.hints:
        patch[f"{REF}.defences.dedupe"] = True
        title += " and near-duplicate suppression"
    return Recommendation(
        "corpus",
        title,
        patch,
        "Weight documents by provenance (vetted sources only: documents from unknown sources "
        "dropped before generation) and strip instruction-like sentences from retrieved text.",
        "removing the injected documents repairs the failure: untrusted content steers the answer",
    )


def _untiered(f: CaseFacts) -> Recommendation:
    """An injected document without vetted sources to trust: only its content tells it
    apart (near-duplicate suppression; the ``injection`` hint adds the sanitiser)."""
    rec = _near_duplicates()
    if "injection" not in f.hints:
        return rec
    patch = {**rec.config_patch, f"{REF}.defences.sanitise": True}
    return replace(rec, title=rec.title + " and instruction sanitising", config_patch=patch)


def _near_duplicates() -> Recommendation:
    return Recommendation(
        "corpus",
        "Near-duplicate suppression",
        {f"{REF}.defences.dedupe": True, f"{REF}.defences.demote_archived": True},
        "Detect near-duplicate documents at ingestion or retrieval and keep only the "
        "authoritative (current) copy.",
        "removing a near-duplicate that differs in one fact repairs the failure",
    )


def _stale(f: CaseFacts) -> Recommendation:
    patch: dict[str, Any] = {f"{REF}.defences.demote_archived": True}
    if "near_duplicate" in f.hints:
        patch[f"{REF}.defences.dedupe"] = True
    return Recommendation(
        "corpus",
        "Date-aware ranking of archived documents",
        patch,
        "Rank current documents above archived or superseded versions (or filter them out "
        "by status metadata).",
        "masking the archived version repairs the failure: an outdated document wins",
    )


def _conflicting(f: CaseFacts) -> Recommendation:
    return Recommendation(
        "corpus",
        "Conflict detection",
        {f"{REF}.defences.conflict": "refuse"},
        "Refuse (or flag for review) answers when two retrieved documents disagree on a number "
        "or date, and fix the conflicting source.",
        "removing the conflicting documents repairs the failure; refusing on a conflict trades "
        "some answers for refusals (verify with probeguard fix)",
    )


def _corpus(f: CaseFacts) -> Recommendation:
    """The corpus fix when no corpus mechanism is named (module docstring)."""
    statuses = {s.lower() for s in f.removed_statuses}
    if "injection" in f.hints:
        return _poisoned(f)
    if "near_duplicate" in f.hints or "draft" in statuses:
        return _near_duplicates()
    if "outdated" in f.hints or statuses & OUTDATED_STATUSES:
        return _stale(f)
    return _conflicting(f)


def _prompt(f: CaseFacts) -> Recommendation:
    return Recommendation(
        "prompt",
        "Spotlight retrieved text and strip embedded instructions",
        {
            f"{REF}.prompt": "hardened",
            f"{REF}.defences.spotlight": True,
            f"{REF}.defences.sanitise": True,
        },
        "Mark retrieved text as untrusted data in the prompt, tell the model to ignore "
        "instructions inside it, and remove instruction-like sentences before generation.",
        "the hardened prompt repairs the failure",
    )


def _generator(f: CaseFacts) -> Recommendation:
    """The generator fix when no generator mechanism is named: an abstain case's refusal
    gate, else the grounding check."""
    return _gate(f) if f.abstain else _grounding(f)


def _grounding(f: CaseFacts) -> Recommendation:
    return Recommendation(
        "generator",
        "Grounding check (and a stronger model)",
        {f"{REF}.defences.grounding": "refuse"},
        "Verify that each answer is supported by the retrieved context and refuse otherwise; "
        "consider a stronger generation model.",
        "the case fails even with the gold evidence in hand: generation is at fault",
    )


def _ignores_context(f: CaseFacts) -> Recommendation:
    return Recommendation(
        "generator",
        "Grounding check (the generator ignores its context)",
        {f"{REF}.defences.grounding": "refuse"},
        "The model answers from its own knowledge, not from the retrieved passages: instruct "
        "it (or fine-tune it) to answer only from its context and to refuse otherwise, and "
        "check each answer against the context before returning it.",
        "the answer does not change with the context: the generator ignores what it is given",
    )


def _unsupported(f: CaseFacts) -> Recommendation:
    """``unsupported_answer``: the grounding check; for an extractive generator a sentence
    only (module docstring: no setting of it repairs the failure)."""
    generator = dict(f.pipeline.get("generator") or {})
    if generator.get("name") != "extractive":
        return _grounding(f)
    return Recommendation(
        "generator",
        "A generator that reads for the answer (the extractive one quotes the wrong sentence)",
        {},
        "The generator quotes sentences that share the question's words but do not answer it, "
        "even from the gold evidence: use a generator that reads the passage for the answer "
        "(an instruction-following model, told to answer only from its context).",
        "the case fails even with the gold evidence in hand: the extractive generator's "
        "verbatim quotes pass a grounding check, and a stricter support threshold only "
        "turns its answers into refusals",
    )


_GATE_SENTENCE = (
    "Refuse when the best retrieval score is below a threshold calibrated on your "
    "retriever's own scores (answerable vs unanswerable questions), per retrieval backend."
)


def _gate(f: CaseFacts) -> Recommendation:
    """The refusal gate on the backend's own score scale (module docstring)."""
    backend = f.backend if f.backend in GATE_BACKENDS else None
    if backend is None:
        return Recommendation(
            "generator",
            "Refusal gate",
            {},
            _GATE_SENTENCE,
            "the pipeline answers an unanswerable question; its retrieval backend and score "
            "scale are not known here, so no threshold is given",
        )
    configured = (f.pipeline.get("retriever") or {}).get("name")
    gate = f.calibrated_gate if backend == configured else None
    if gate is not None and gate.get("youden_j", 0.0) > 0.0:
        return Recommendation(
            "generator",
            f"Refusal gate for the {backend} backend",
            {f"{REF}.defences.gate": {backend: float(gate["min_score"])}},
            _GATE_SENTENCE,
            f"calibrated on this run (Youden's J {gate['youden_j']:.2f}): refuses "
            f"{_share(gate['abstention'])} of unanswerable and "
            f"{_share(gate['false_refusal'])} of answerable golden questions",
        )
    score = f.top_score
    value = (
        (math.floor(score * 100 + 1) / 100) if score is not None and math.isfinite(score) else None
    )
    return Recommendation(
        "generator",
        f"Refusal gate for the {backend} backend",
        {f"{REF}.defences.gate": {backend: value}} if value is not None else {},
        _GATE_SENTENCE,
        "the pipeline answers an unanswerable question from irrelevant context; the gate "
        "value sits just above this case's top score (calibrate it on benign controls "
        "before use)"
        if value is not None
        else "the pipeline answers an unanswerable question; calibrate the gate on benign controls",
    )


def _over_refusal(f: CaseFacts) -> Recommendation:
    """A generator that refuses with the gold evidence in hand (module docstring)."""
    defences = dict(f.pipeline.get("defences") or {})
    generator = dict(f.pipeline.get("generator") or {})
    patch: dict[str, Any]
    if defences.get("grounding") == "refuse":
        patch, title = {f"{REF}.defences.grounding": "off"}, "Grounding check off (over-refusal)"
    elif defences.get("conflict") == "refuse":
        patch, title = {f"{REF}.defences.conflict": "flag"}, "Flag conflicts, do not refuse"
    elif generator.get("name") == "extractive":
        current = float(generator.get("min_support", ExtractiveGenerator().min_support))
        new = round(current / 2, 2)
        patch = {f"{REF}.generator": {**generator, "min_support": new}}
        title = f"Lower the generator's support threshold ({current:g} -> {new:g})"
    else:
        patch, title = {}, "Let the generator answer from evidence it holds"
    return Recommendation(
        "generator",
        title,
        patch,
        "The generator refuses although the retrieved passages state the answer: loosen "
        "its refusal rule (the prompt's refusal instruction, a support or confidence "
        "threshold, or an answer-checking step that refuses) and check false refusals on "
        "answerable questions.",
        "given the gold evidence alone the pipeline still refuses: it over-refuses",
    )


def _share(estimate: Mapping[str, Any]) -> str:
    value = estimate.get("value")
    return "n/a" if value is None or value != value else f"{value:.2f} (n={estimate['n']})"


_BY_CAUSE: dict[str, Callable[[CaseFacts], Recommendation]] = {
    "chunker": _chunker,
    "retriever": _retriever,
    "corpus": _corpus,
    "prompt": _prompt,
    "generator": _generator,
}
"""The fix of a cause whose mechanism names no fix of its own."""

_BY_MECHANISM: dict[str, Callable[[CaseFacts], Recommendation]] = {
    "chunk_boundary": _chunker,
    "lexical_retrieval_miss": _lexical_miss,
    "retrieval_miss": _retriever,
    "ranking_demotes_evidence": _ranking,
    "top_k_too_small": _top_k_too_small,
    "stale_version_outranks": _stale,
    "poisoned_document_adopted": _poisoned,
    "conflicting_documents": _conflicting,
    "obeys_injected_instructions": _prompt,
    "no_refusal_gate": _gate,
    "refuses_with_evidence": _over_refusal,
    "ignores_context": _ignores_context,
    "unsupported_answer": _unsupported,
}
"""The mechanism → fix table of the module docstring."""


def recommend(cause: str, facts: CaseFacts | None = None) -> Recommendation | None:
    """The fix for a failure blamed on ``cause`` (module docstring): the mechanism's when it
    belongs to ``cause``, else the cause's; None for ``undetermined``. Any pipeline but the
    reference one gets no ``config_patch``: its ``other_pipelines`` sentence is the fix."""
    if cause not in _BY_CAUSE:
        return None
    facts = facts if facts is not None else CaseFacts()
    own = component_of(facts.mechanism) == cause
    make = _BY_MECHANISM.get(facts.mechanism) if own else None
    rec = (make or _BY_CAUSE[cause])(facts)
    rec = replace(rec, cause=cause)
    return rec if facts.reference else replace(rec, config_patch={})


def top_fixes(
    recommendations: Sequence[dict[str, Any] | None], limit: int = 5
) -> list[dict[str, Any]]:
    """The distinct recommendations, most frequent first (ties by title), with ``cases``."""
    import json

    counts: dict[str, tuple[int, dict[str, Any]]] = {}
    for rec in recommendations:
        if not rec:
            continue
        key = json.dumps(
            [rec["cause"], rec["title"], rec["config_patch"]], sort_keys=True, default=str
        )
        n, _ = counts.get(key, (0, rec))
        counts[key] = (n + 1, rec)
    ranked = sorted(counts.values(), key=lambda x: (-x[0], x[1]["title"]))
    return [{**rec, "cases": n} for n, rec in ranked[:limit]]

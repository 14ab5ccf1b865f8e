"""Fix recommendations: per cause, a structured change a fix command can apply.

A ``Recommendation`` is data: ``config_patch`` maps dotted paths of the scan config
(``pipeline.reference.…``, keys of ``ReferencePipelineConfig`` and its ``defences``) to new
values — the reference pipeline's fix — and ``other_pipelines`` is one concrete sentence for
any other pipeline. **Only a reference pipeline gets a patch** (``CaseFacts.reference``):
for a callable or HTTP pipeline the patch is empty and the sentence is the fix. The choice
per cause:

* **chunker** — the configured chunker is token windows without overlap or under 128 tokens:
  windows of ``max(128, 2·size)`` tokens with a quarter overlap; otherwise sentence-aware
  chunking (``{name: sentences, max_tokens: 128}``);
* **retriever** — not hybrid: hybrid retrieval; hybrid without a re-ranker: the lexical
  re-ranker; already re-ranked: query expansion. A failing probe's ``paraphrase`` hint adds
  query expansion to the patch;
* **corpus** — by what the case was, as the failing probe's fix hints
  (``probeguard.probes.FIX_HINTS``) and the masked documents' status say: ``injection`` →
  source trust tiers (unknown sources demoted to ``default_trust`` 0.25) and the instruction
  sanitiser; ``near_duplicate``, or a masked draft → near-duplicate suppression (``dedupe``);
  ``outdated``, or an archived/superseded version masked → date-aware ranking
  (``demote_archived``); otherwise → conflict refusal;
* **prompt** — the hardened prompt with spotlighting and the instruction sanitiser;
* **generator** — an abstain case → a refusal gate on the **real** retrieval backend's score
  scale (``defences.gate``, keyed by the backend the case ran on, one of
  ``core.defences.GATE_BACKENDS``): Youden's best threshold over the run's answerable vs
  unanswerable top scores (``metrics.gate.best_gate``) when the case ran on the configured
  backend those scores come from, else just above the failing case's top score; an unknown
  backend (any pipeline but the reference one) gets no number, only the sentence. The
  mechanism ``refuses_with_evidence`` (the generator refuses with the gold evidence in hand)
  → an over-refusal fix: the grounding check from ``refuse`` to ``off``, else conflict
  refusal to ``flag``, else an extractive generator's ``min_support`` halved, else a
  sentence only. Otherwise the grounding check (refuse unsupported answers) and a stronger
  model;
* **undetermined** — none.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from probeguard.core.defences import GATE_BACKENDS
from probeguard.models.generators.extractive import ExtractiveGenerator

__all__ = ["Recommendation", "recommend"]

REF = "pipeline.reference"


@dataclass(frozen=True)
class Recommendation:
    cause: str
    title: str
    config_patch: dict[str, Any]
    other_pipelines: str
    why: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def key(self) -> str:
        """Identity for counting the same fix across cases."""
        import json

        return json.dumps([self.cause, self.title, self.config_patch], sort_keys=True, default=str)


@dataclass(frozen=True)
class CaseFacts:
    """What a recommendation may depend on."""

    hints: frozenset[str] = frozenset()
    """The failing probe's fix hints for the case (``Probe.case_fix_hints``)."""
    abstain: bool = False
    removed_statuses: tuple[str, ...] = ()
    """``metadata.status`` of the documents the clean corpus masked."""
    top_score: float | None = None
    backend: str | None = None
    pipeline: Mapping[str, Any] = field(default_factory=dict)
    """The reference pipeline's config (``ReferencePipelineConfig`` as JSON), when known."""
    calibrated_gate: Mapping[str, Any] | None = None
    """``metrics.gate.best_gate`` over the run (answerable vs unanswerable top scores)."""
    trusted_sources: tuple[str, ...] = ()
    """Glob patterns of the scanned corpus's own sources (``trusted_source_globs``)."""
    reference: bool = True
    """The scanned pipeline is the reference pipeline (a ``config_patch`` can apply)."""
    mechanism: str = ""
    """The failure's mechanism (``core.mechanisms`` id), when known."""


def trusted_source_globs(sources: Sequence[str], limit: int = 10) -> tuple[str, ...]:
    """Trust-tier patterns for the corpus the user vetted: ``*<file>:*`` for sources of the
    loaders' ``<path>:<line>`` form (independent of where the file sits), the source itself
    otherwise; sorted, at most ``limit`` (more distinct sources than that: none — tiers
    should then come from document metadata)."""
    import os

    globs = set()
    for source in sources:
        if not source:
            continue
        path, _, line = source.rpartition(":")
        globs.add(f"*{os.path.basename(path)}:*" if path and line.isdigit() else source)
    return tuple(sorted(globs)) if len(globs) <= limit else ()


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
    paraphrase = "paraphrase" in f.hints
    retriever = (f.pipeline.get("retriever") or {}).get("name")
    patch: dict[str, Any]
    if retriever not in (None, "hybrid"):
        patch, title = {f"{REF}.retriever": {"name": "hybrid"}}, "Hybrid retrieval"
    elif not f.pipeline.get("reranker"):
        patch, title = {f"{REF}.reranker": {"name": "lexical"}}, "Add a re-ranker"
    else:
        patch, title = {f"{REF}.defences.query_expansion": True}, "Query expansion"
    if paraphrase and f"{REF}.defences.query_expansion" not in patch:
        patch[f"{REF}.defences.query_expansion"] = True
        title += " with query expansion"
    return Recommendation(
        "retriever",
        title,
        patch,
        "Combine keyword and embedding retrieval (hybrid), re-rank the candidates, and expand "
        "queries with synonyms so reworded questions still find their evidence.",
        "better retrieval (or the gold evidence itself) repairs the failure: the evidence "
        "does not reach the generator",
    )


def _corpus(f: CaseFacts) -> Recommendation:
    statuses = {s.lower() for s in f.removed_statuses}
    if "injection" in f.hints:
        patch: dict[str, Any] = {
            f"{REF}.defences.default_trust": 0.25,
            f"{REF}.defences.sanitise": True,
        }
        if f.trusted_sources:
            patch[f"{REF}.defences.trust_tiers"] = {glob: 1.0 for glob in f.trusted_sources}
        return Recommendation(
            "corpus",
            "Source trust tiers and instruction sanitising",
            patch,
            "Weight documents by provenance (vetted sources first, unknown sources demoted or "
            "dropped) and strip instruction-like sentences from retrieved text.",
            "removing the injected documents repairs the failure: untrusted content steers "
            "the answer",
        )
    if "near_duplicate" in f.hints or "draft" in statuses:
        return Recommendation(
            "corpus",
            "Near-duplicate suppression",
            {f"{REF}.defences.dedupe": True},
            "Detect near-duplicate documents at ingestion or retrieval and keep only the "
            "authoritative copy.",
            "removing a near-duplicate that differs in one fact repairs the failure",
        )
    if "outdated" in f.hints or statuses & {"archived", "superseded", "deprecated", "obsolete"}:
        return Recommendation(
            "corpus",
            "Date-aware ranking of archived documents",
            {f"{REF}.defences.demote_archived": True},
            "Rank current documents above archived or superseded versions (or filter them out "
            "by status metadata).",
            "masking the archived version repairs the failure: an outdated document wins",
        )
    return Recommendation(
        "corpus",
        "Conflict detection",
        {f"{REF}.defences.conflict": "refuse"},
        "Refuse (or flag for review) answers when two retrieved documents disagree on a number "
        "or date, and fix the conflicting source.",
        "removing the conflicting documents repairs the failure; refusing on a conflict trades "
        "some answers for refusals (verify with probeguard fix)",
    )


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
    if f.abstain:
        return _gate(f)
    if f.mechanism == "refuses_with_evidence":
        return _over_refusal(f)
    return Recommendation(
        "generator",
        "Grounding check (and a stronger model)",
        {f"{REF}.defences.grounding": "refuse"},
        "Verify that each answer is supported by the retrieved context and refuse otherwise; "
        "consider a stronger generation model.",
        "the case fails even with the gold evidence in hand: generation is at fault",
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


_BY_CAUSE = {
    "chunker": _chunker,
    "retriever": _retriever,
    "corpus": _corpus,
    "prompt": _prompt,
    "generator": _generator,
}


def recommend(cause: str, facts: CaseFacts = CaseFacts()) -> Recommendation | None:
    """The fix for ``cause`` (module docstring); None for ``undetermined``. Any pipeline but
    the reference one gets no ``config_patch``: its ``other_pipelines`` sentence is the fix."""
    make = _BY_CAUSE.get(cause)
    if make is None:
        return None
    rec = make(facts)
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

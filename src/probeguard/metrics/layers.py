"""Layered scoring of one case: retrieval, answer, abstention and citation, each judged on
its own, and an overall pass (pure functions over an ``Expected`` and a ``PipelineOutput``).

A layer is ``True`` (passed), ``False`` (failed) or ``None`` (does not apply to this case,
or cannot be measured on this output): ``None`` is never counted as a pass or a failure.

With ``refused = output.refused or looks_like_refusal(output.answer)`` and the answer
compared without its ``[n]`` citation markers, using SQuAD-normalised containment
(``probeguard.nlp.text.contains_answer``, written ``∋`` below):

* **retrieval** — hit@k of the gold evidence (Manning et al. 2008, ch. 8, at document
  level): some ``evidence_doc_ids`` document is among the first ``k`` distinct retrieved
  documents. Applies when the mode is not ``abstain`` and the case names evidence; ``None``
  when the output reports no retrieved contexts (a pipeline that does not expose them).
* **answer** — modes ``answer`` and ``correct_premise``::

      answer = (answers = ∅  or  ∃ a ∈ answers: A ∋ a)
               ∧ ∀ c ∈ contains: A ∋ c  ∧  ∀ x ∈ excludes: ¬(A ∋ x)  ∧  ¬refused

  For ``correct_premise`` this is the premise check: the answer holds the corrected fact
  (``answers``/``contains``), not the false premise's value (``excludes``), and is not a
  refusal (declining is not correcting). ``None`` for ``abstain``.
* **abstention** — mode ``abstain``: ``refused``. ``None`` for the other modes.
* **citation** — the answer cites the evidence, all it must cite, and nothing it must not:
  with ``D`` the documents of the cited chunks (``cited_chunk_ids`` mapped through the
  retrieved chunks, then ``chunk_docs``) and ``U`` the uncitable documents::

      citation = (evidence_doc_ids = ∅  or  D ∩ evidence_doc_ids ≠ ∅)
                 ∧ must_cite ⊆ D  ∧  D ∩ U = ∅

  ``U`` is ``must_not_cite`` plus what the caller knows (``uncitable_doc_ids``: injected
  documents, outdated or conflicting versions of the evidence), so citing the archived copy
  fails even when the answer also cites the current one. Applies when the mode is not
  ``abstain``, the case names evidence or citation expectations (``must_cite``,
  ``must_not_cite``), the answer is not a refusal (a refusal claims nothing to attribute),
  and either ``require_citation`` or ``must_cite`` (citation traps: an uncited claim fails)
  or the output cites something (any pipeline that returns citations is checked on every
  such case).
  ``None`` when no cited chunk can be mapped to a document.
* **pass** — every applicable layer passed; ``None`` when no layer applies (or the call
  errored: ``output is None``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from probeguard.core.cases import Expected
from probeguard.core.documents import Document, is_outdated, version_links
from probeguard.core.pipeline import PipelineOutput
from probeguard.detectors.fabrication import is_refusal
from probeguard.metrics.retrieval import first_relevant_rank, recall_of
from probeguard.nlp.text import contains_answer, strip_citations

__all__ = [
    "LAYERS",
    "LayerScores",
    "answer_layer",
    "cited_doc_ids",
    "citation_applies",
    "citation_layer",
    "citation_score",
    "is_refusal",
    "retrieval_layer",
    "score_layers",
    "uncitable_doc_ids",
]

LAYERS: tuple[str, ...] = ("retrieval", "answer", "abstention", "citation")
"""The scored layers, in report order (``pass`` is their conjunction)."""


@dataclass(frozen=True)
class LayerScores:
    """One case's layers (``None``: not applicable / not measurable) and the details a
    reader needs to see why (``detail``)."""

    retrieval: bool | None = None
    answer: bool | None = None
    abstention: bool | None = None
    citation: bool | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool | None:
        """All applicable layers passed; ``None`` when none applies."""
        applied = [
            v
            for v in (self.retrieval, self.answer, self.abstention, self.citation)
            if v is not None
        ]
        return all(applied) if applied else None

    def layers(self) -> dict[str, bool | None]:
        """``{retrieval, answer, abstention, citation, pass}``."""
        return {
            "retrieval": self.retrieval,
            "answer": self.answer,
            "abstention": self.abstention,
            "citation": self.citation,
            "pass": self.passed,
        }


def retrieval_layer(
    ranked_doc_ids: Sequence[str], evidence: Sequence[str], k: int
) -> tuple[bool | None, dict[str, Any]]:
    """hit@k of ``evidence`` in ``ranked_doc_ids`` (best first; a document's chunks count
    once); ``None`` when there is no evidence or nothing was retrieved."""
    if not evidence or not ranked_doc_ids:
        return None, {}
    rank = first_relevant_rank(ranked_doc_ids, evidence)
    return rank is not None and rank <= k, {
        "evidence_rank": rank,
        "k": k,
        "all_evidence": recall_of(ranked_doc_ids, evidence, k) == 1.0,
    }


def answer_layer(answer: str, expected: Expected, *, refused: bool) -> tuple[bool, dict[str, Any]]:
    """The answer check (module docstring): one of ``answers``, all of ``contains``, none
    of ``excludes``, not a refusal. ``answer`` is compared as given (strip citations first)."""
    matched = [a for a in expected.answers if contains_answer(answer, a)]
    missing = [c for c in expected.contains if not contains_answer(answer, c)]
    found = [x for x in expected.excludes if contains_answer(answer, x)]
    ok = (not expected.answers or bool(matched)) and not missing and not found and not refused
    return ok, {"matched_answers": matched, "missing_contains": missing, "found_excludes": found}


def cited_doc_ids(
    output: PipelineOutput, chunk_docs: Mapping[str, str] | None = None
) -> tuple[list[str], list[str]]:
    """(documents of the cited chunks in first-cited order, cited chunk ids that map to no
    document). A chunk maps through the output's retrieved chunks, then ``chunk_docs``."""
    by_chunk = {r.chunk_id: r.doc_id for r in output.retrieved}
    docs: list[str] = []
    unknown: list[str] = []
    for chunk_id in output.cited_chunk_ids:
        doc = by_chunk.get(chunk_id) or (chunk_docs or {}).get(chunk_id)
        if doc is None:
            unknown.append(chunk_id)
        elif doc not in docs:
            docs.append(doc)
    return docs, unknown


def citation_layer(
    cited_docs: Sequence[str],
    evidence: Sequence[str],
    *,
    must_cite: Sequence[str] = (),
    uncitable: Collection[str] = (),
) -> tuple[bool, dict[str, Any]]:
    """The citation check (module docstring): some cited document is an evidence document
    (when the case names evidence), every ``must_cite`` document is cited, and no
    ``uncitable`` one is. The detail names what is missing (``missing_citations``) and what
    must not have been cited (``cited_uncitable``) when there is any."""
    gold = set(evidence)
    missing = [d for d in must_cite if d not in cited_docs]
    forbidden = [d for d in cited_docs if d in uncitable]
    ok = (not gold or any(d in gold for d in cited_docs)) and not missing and not forbidden
    detail: dict[str, Any] = {
        "cited_doc_ids": list(cited_docs),
        "cited_non_evidence": [d for d in cited_docs if d not in gold],
    }
    if missing:
        detail["missing_citations"] = missing
    if forbidden:
        detail["cited_uncitable"] = forbidden
    return ok, detail


def uncitable_doc_ids(
    expected: Expected, documents: Iterable[Document], overlay: Iterable[Document] = ()
) -> frozenset[str]:
    """The documents an answer to a case must not cite: its ``must_not_cite``; every
    injected document (``overlay``: planted text is never a source); every corpus document
    that is an outdated version (``core.documents.is_outdated``: archived, superseded, draft…)
    or that is linked to an evidence document through ``VERSION_LINKS`` in either direction
    (another version of it). The evidence and the ``must_cite`` documents never are."""
    allowed = {*expected.evidence_doc_ids, *expected.must_cite}
    out = set(expected.must_not_cite) | {d.id for d in overlay}
    for doc in documents:
        links = version_links(doc.metadata)
        if is_outdated(doc.metadata) or links & allowed:
            out.add(doc.id)
        out |= links if doc.id in allowed else set()
    return frozenset(out - allowed)


def citation_applies(expected: Expected) -> bool:
    """The case says something about citations: it names evidence, ``must_cite`` or
    ``must_not_cite`` documents (and is not an abstention case)."""
    return expected.mode != "abstain" and bool(
        expected.evidence_doc_ids or expected.must_cite or expected.must_not_cite
    )


def citation_score(
    expected: Expected,
    output: PipelineOutput,
    *,
    require_citation: bool = False,
    chunk_docs: Mapping[str, str] | None = None,
    uncitable: Collection[str] = (),
) -> tuple[bool | None, dict[str, Any]]:
    """The citation layer of an answer (module docstring; the caller checks that it applies):
    ``citation_layer`` over the cited documents with ``expected``'s evidence, ``must_cite``
    and ``must_not_cite`` plus ``uncitable``; an answer citing nothing fails when a citation
    is required (``require_citation`` or ``must_cite``), else is ``None``, as is one whose
    citations map to no document."""
    docs, unknown = cited_doc_ids(output, chunk_docs)
    detail: dict[str, Any] = {"unmapped_citations": unknown} if unknown else {}
    if docs:
        ok, info = citation_layer(
            docs,
            expected.evidence_doc_ids,
            must_cite=expected.must_cite,
            uncitable={*expected.must_not_cite, *uncitable},
        )
        return ok, {**detail, **info}
    if (require_citation or expected.must_cite) and not unknown:
        return False, {**detail, "cited_doc_ids": [], "cited_non_evidence": []}
    return None, detail


def score_layers(
    expected: Expected,
    output: PipelineOutput | None,
    *,
    k: int,
    require_citation: bool = False,
    chunk_docs: Mapping[str, str] | None = None,
    uncitable: Collection[str] = (),
) -> LayerScores:
    """Every layer of one case (rules in the module docstring). ``k``: the pipeline's
    retrieval depth; ``require_citation``: an uncited answer fails the citation layer
    (citation traps) instead of leaving it unscored; ``uncitable``: documents the answer
    must not cite beyond ``expected.must_not_cite`` (``uncitable_doc_ids``)."""
    if output is None:
        return LayerScores(detail={"unscored": "no output"})
    refused = is_refusal(output)
    detail: dict[str, Any] = {"refused": refused}
    abstain = expected.mode == "abstain"
    retrieval: bool | None = None
    answer: bool | None = None
    abstention: bool | None = None
    citation: bool | None = None
    if not abstain:
        ranked = [r.doc_id for r in sorted(output.retrieved, key=lambda r: r.rank)]
        retrieval, info = retrieval_layer(ranked, expected.evidence_doc_ids, k)
        detail.update(info)
        answer, info = answer_layer(strip_citations(output.answer), expected, refused=refused)
        detail.update(info)
        if citation_applies(expected) and not refused:
            citation, info = citation_score(
                expected,
                output,
                require_citation=require_citation,
                chunk_docs=chunk_docs,
                uncitable=uncitable,
            )
            detail.update(info)
    else:
        abstention = refused
    return LayerScores(
        retrieval=retrieval, answer=answer, abstention=abstention, citation=citation, detail=detail
    )

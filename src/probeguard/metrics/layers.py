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
* **citation** — the answer cites a chunk of an evidence document: with ``D`` the documents
  of the cited chunks (``cited_chunk_ids`` mapped through the retrieved chunks, then
  ``chunk_docs``), ``citation = D ∩ evidence_doc_ids ≠ ∅``. Applies when the mode is not
  ``abstain``, the case names evidence, the answer is not a refusal (a refusal claims
  nothing to attribute), and either ``require_citation`` (citation traps: an uncited claim
  fails) or the output cites something (any pipeline that returns citations is checked on
  every case with evidence). ``None`` when no cited chunk can be mapped to a document.
* **pass** — every applicable layer passed; ``None`` when no layer applies (or the call
  errored: ``output is None``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from probeguard.core.cases import Expected
from probeguard.core.pipeline import PipelineOutput
from probeguard.detectors.fabrication import is_refusal
from probeguard.metrics.retrieval import first_relevant_rank, recall_of
from probeguard.nlp.text import contains_answer, strip_citations

__all__ = [
    "LAYERS",
    "LayerScores",
    "answer_layer",
    "cited_doc_ids",
    "citation_layer",
    "is_refusal",
    "retrieval_layer",
    "score_layers",
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
    cited_docs: Sequence[str], evidence: Sequence[str]
) -> tuple[bool, dict[str, Any]]:
    """Some cited document is an evidence document."""
    gold = set(evidence)
    return any(d in gold for d in cited_docs), {
        "cited_doc_ids": list(cited_docs),
        "cited_non_evidence": [d for d in cited_docs if d not in gold],
    }


def score_layers(
    expected: Expected,
    output: PipelineOutput | None,
    *,
    k: int,
    require_citation: bool = False,
    chunk_docs: Mapping[str, str] | None = None,
) -> LayerScores:
    """Every layer of one case (rules in the module docstring). ``k``: the pipeline's
    retrieval depth; ``require_citation``: an uncited answer fails the citation layer
    (citation traps) instead of leaving it unscored."""
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
        if expected.evidence_doc_ids and not refused:
            docs, unknown = cited_doc_ids(output, chunk_docs)
            if unknown:
                detail["unmapped_citations"] = unknown
            if docs:
                citation, info = citation_layer(docs, expected.evidence_doc_ids)
                detail.update(info)
            elif require_citation and not unknown:
                citation = False
                detail.update(cited_doc_ids=[], cited_non_evidence=[])
    else:
        abstention = refused
    return LayerScores(
        retrieval=retrieval, answer=answer, abstention=abstention, citation=citation, detail=detail
    )

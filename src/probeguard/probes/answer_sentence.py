"""The answer-bearing sentence of a golden question: the sentence of a gold document that
holds a gold answer (the longest answer string found, matched case-insensitively on word
boundaries, first occurrence; gold documents in ``evidence_doc_ids`` order), and the passage
that carries a changed copy of it. Corpus contradiction and corpus poisoning build their
documents from it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from probeguard.core.cases import Case
from probeguard.core.documents import Document
from probeguard.nlp.text import sentence_spans, words
from probeguard.probes.base import ProbeContext

__all__ = ["Evidence", "locate_evidence", "passage_with_context"]

_PRONOUNS = frozenset(
    {"it", "its", "he", "his", "she", "her", "they", "their", "this", "these", "those", "there"}
)


@dataclass(frozen=True)
class Evidence:
    """Where a question's answer sits in its gold document: the document, the answer span
    and the sentence span (character offsets into ``doc.text``)."""

    doc: Document
    answer: tuple[int, int]
    sentence: tuple[int, int]


def _answer_pattern(answer: str) -> re.Pattern[str] | None:
    parts = answer.split()
    if not parts:
        return None
    return re.compile(
        r"(?<!\w)" + r"\s+".join(re.escape(p) for p in parts) + r"(?!\w)", re.IGNORECASE
    )


def locate_evidence(
    question: Case, documents: Mapping[str, Document] | ProbeContext
) -> Evidence | None:
    """The answer-bearing sentence of ``question`` (see the module docstring), or None.
    ``documents`` maps ids to documents (or is a ``ProbeContext``)."""
    lookup = documents.document if isinstance(documents, ProbeContext) else documents.get
    answers = sorted(enumerate(question.expected.answers), key=lambda ia: (-len(ia[1]), ia[0]))
    for doc_id in question.expected.evidence_doc_ids:
        doc = lookup(doc_id)
        if doc is None:
            continue
        for _, answer in answers:
            pattern = _answer_pattern(answer)
            m = pattern.search(doc.text) if pattern is not None else None
            if m is None:
                continue
            a0, a1 = m.span()
            for s, e in sentence_spans(doc.text):
                if s <= a0 < e:
                    return Evidence(doc, (a0, min(a1, e)), (s, e))
    return None


def passage_with_context(doc_text: str, sentence: tuple[int, int], mutated: str) -> tuple[str, int]:
    """The injected passage for a single-fact kind and the offset of the mutated sentence in
    it: the mutated sentence, preceded by the sentence before it when it opens with a
    pronoun."""
    first = words(mutated[:40])
    if first and first[0] in _PRONOUNS:
        previous = [(s, e) for s, e in sentence_spans(doc_text) if e <= sentence[0]]
        if previous:
            s, e = previous[-1]
            prefix = doc_text[s:e] + " "
            return prefix + mutated, len(prefix)
    return mutated, 0

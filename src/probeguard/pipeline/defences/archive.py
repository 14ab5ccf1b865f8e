"""Date-aware ranking: archived, superseded and draft documents rank below current ones.

A retrieved document is *outdated* when

1. its metadata ``status`` (case-insensitive) is one of ``OUTDATED_STATUSES`` (archived,
   superseded, draft, deprecated, obsolete), or it names a ``superseded_by`` document; or
2. another retrieved document names it in ``supersedes``; or
3. it is not outdated by 1–2, and another such retrieved document of the same *title family*
   carries a later date. The date is metadata ``effective`` (``YYYY``, ``YYYY-MM`` or
   ``YYYY-MM-DD``), else ``year``; a document without one is never outdated by rule 3. The
   family is the title up to its first ``:`` / `` - `` / `` — ``, lower-cased, without
   parentheses, years, and the words draft, archived, archive, old, revision, superseded,
   current, version (so "Refund Policy (2022)" and "Refund Policy" are one family, and
   "Membership Plans (2023)" and "Membership Plans: Kestrel Plus and Kestrel Pro" another).

A question that names a year ("Under the 2022 refund policy, ...") asks for that version:
a document whose date or title holds a year the question names is not outdated.

The hits are stably partitioned: every hit of a current document keeps its relative order
and comes first, then the outdated ones in theirs. Nothing is dropped: a question only an
archived document answers still gets it, at a lower rank.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from probeguard.core.documents import OUTDATED_STATUSES
from probeguard.pipeline.defences.ranking import renumber
from probeguard.pipeline.retrievers.base import Hit

__all__ = [
    "OUTDATED_STATUSES",
    "demote_archived",
    "document_date",
    "outdated_doc_ids",
    "title_family",
]


_YEAR = re.compile(r"\b(?:1[89]\d{2}|20\d{2})\b")
_DATE = re.compile(r"^\s*(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?")
_SEPARATOR = re.compile(r"\s*(?::|\s-\s|\s—\s|\s–\s)")
_FAMILY_NOISE = re.compile(
    r"\([^)]*\)|\[[^\]]*\]|\b(?:1\d{3}|20\d{2})\b|\b(?:draft|archived|"
    r"archive|old|revision|superseded|current|version|v\d+)\b",
    re.IGNORECASE,
)


def document_date(metadata: Mapping[str, Any]) -> tuple[int, int, int] | None:
    """``(year, month, day)`` from ``effective`` (else ``year``); 0 for a missing part."""
    for key in ("effective", "year"):
        value = metadata.get(key)
        if value is None or isinstance(value, bool):
            continue
        m = _DATE.match(str(value))
        if m:
            return int(m.group(1)), int(m.group(2) or 0), int(m.group(3) or 0)
    return None


def title_family(title: str) -> str:
    """The title reduced to its family (module docstring); "" for an empty title."""
    head = _SEPARATOR.split(title, maxsplit=1)[0]
    return " ".join(re.findall(r"[a-z0-9]+", _FAMILY_NOISE.sub(" ", head).lower()))


def _links(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value} if value else set()
    if isinstance(value, (list, tuple, set, frozenset)):
        return {str(v) for v in value}
    return set()


def _asked_for(meta: Mapping[str, Any], title: str, years: set[str]) -> bool:
    date = document_date(meta)
    return bool(years) and (
        (date is not None and str(date[0]) in years) or bool(years & set(_YEAR.findall(title)))
    )


def outdated_doc_ids(hits: Sequence[Hit], question: str = "") -> dict[str, str]:
    """The outdated documents among the hits, each with the rule that marked it (documents
    of a year the question names excepted)."""
    docs: dict[str, tuple[Mapping[str, Any], str]] = {}
    for hit in hits:
        docs.setdefault(hit.chunk.doc_id, (hit.chunk.metadata, hit.chunk.title))
    out: dict[str, str] = {}
    for doc_id, (meta, _) in docs.items():
        status = str(meta.get("status", "")).strip().lower()
        if status in OUTDATED_STATUSES:
            out[doc_id] = f"status {status}"
        elif _links(meta.get("superseded_by")):
            out[doc_id] = "superseded_by " + ", ".join(sorted(_links(meta["superseded_by"])))
    for doc_id, (meta, _) in docs.items():
        if doc_id in out:
            continue
        for older in sorted(_links(meta.get("supersedes")) & set(docs)):
            out.setdefault(older, f"superseded by {doc_id}")
    families: dict[str, list[tuple[tuple[int, int, int], str]]] = {}
    for doc_id, (meta, title) in docs.items():
        date, family = document_date(meta), title_family(title)
        if doc_id not in out and date is not None and family:
            families.setdefault(family, []).append((date, doc_id))
    for members in families.values():
        latest = max(date for date, _ in members)
        for date, doc_id in members:
            if date < latest:
                out[doc_id] = "a later version of the same title is retrieved"
    years = set(_YEAR.findall(question))
    return {d: why for d, why in out.items() if not _asked_for(docs[d][0], docs[d][1], years)}


def demote_archived(hits: Sequence[Hit], question: str = "") -> tuple[list[Hit], dict[str, str]]:
    """Current documents' hits first, outdated ones after (both in their order), and the
    outdated documents with their reasons."""
    outdated = outdated_doc_ids(hits, question)
    current = [h for h in hits if h.chunk.doc_id not in outdated]
    old = [h for h in hits if h.chunk.doc_id in outdated]
    return renumber(current + old), outdated

"""Documents and chunks: the units that corpora, retrievers and probes share.

Ids are content-derived: a document without an explicit id gets ``doc-<sha256(title,text)[:12]>``;
a chunk's id is ``<doc_id>#<start>-<end>``, so the same chunking of the same document always
yields the same ids, and an id says where in the document the chunk lies.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from probeguard.core.hashing import canonical_json, sha256_hex


class Document(BaseModel):
    """One source document. ``source`` says where it came from (a file path,
    ``file:line``, or a probe name for documents a probe injects). Documents are frozen
    pydantic models so that cases carrying injected documents serialise into the run log."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    text: str
    title: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    source: str = ""

    @staticmethod
    def content_id(title: str, text: str) -> str:
        """The id a document gets when its input gives none: ``doc-`` + 12 hex of sha256."""
        return "doc-" + sha256_hex(title, text)[:12]

    @classmethod
    def create(
        cls,
        text: str,
        *,
        id: str | None = None,
        title: str = "",
        metadata: Mapping[str, Any] | None = None,
        source: str = "",
    ) -> Document:
        return cls(
            id=id or cls.content_id(title, text),
            text=text,
            title=title,
            metadata=dict(metadata or {}),
            source=source,
        )

    def content_hash(self) -> str:
        """sha256 over id, title, text and metadata (not ``source``: moving a file
        does not change the corpus)."""
        return sha256_hex(self.id, self.title, self.text, canonical_json(dict(self.metadata)))


@dataclass(frozen=True, slots=True, eq=True)
class Chunk:
    """A span of a document: ``text == document.text[start:end]`` always holds.

    ``index`` is the chunk's position within its document under one chunking;
    ``metadata`` is the document's metadata (chunks inherit it for filtering; treat it as
    read-only). Chunks are plain frozen dataclasses: an index holds 100k of them.
    """

    id: str
    doc_id: str
    text: str
    start: int
    end: int
    index: int
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False)
    title: str = field(default="", compare=False)

    def __hash__(self) -> int:
        return hash(self.id)

    @staticmethod
    def make_id(doc_id: str, start: int, end: int) -> str:
        return f"{doc_id}#{start}-{end}"

    @classmethod
    def of(cls, doc: Document, start: int, end: int, index: int) -> Chunk:
        """The chunk of ``doc`` covering characters ``[start, end)``."""
        return cls(
            id=cls.make_id(doc.id, start, end),
            doc_id=doc.id,
            text=doc.text[start:end],
            start=start,
            end=end,
            index=index,
            metadata=doc.metadata,
            title=doc.title,
        )


OUTDATED_STATUSES = frozenset({"archived", "superseded", "draft", "deprecated", "obsolete"})
"""``metadata["status"]`` values (case-insensitive) of a document that is not the current
version of what it says (the ``demote_archived`` defence ranks them down)."""

VERSION_LINKS = ("supersedes", "superseded_by", "near_duplicate_of", "duplicate_of")
"""Metadata keys that name another version of the same document (an id or a list of ids)."""


def is_outdated(metadata: Mapping[str, Any]) -> bool:
    """The document is an outdated version: its ``status`` is one of ``OUTDATED_STATUSES``
    (case-insensitive) or it names a ``superseded_by`` document."""
    status = str(metadata.get("status", "")).lower()
    return status in OUTDATED_STATUSES or bool(metadata.get("superseded_by"))


def version_links(metadata: Mapping[str, Any]) -> set[str]:
    """The ids the document's ``VERSION_LINKS`` keys name."""
    out: set[str] = set()
    for key in VERSION_LINKS:
        value = metadata.get(key)
        if isinstance(value, str):
            out.add(value)
        elif isinstance(value, (list, tuple)):
            out.update(str(v) for v in value)
    return out


def corpus_fingerprint(documents: Iterable[Document]) -> str:
    """sha256 over the sorted content hashes of the documents: order-independent,
    and changed by any edit to any document's id, title, text or metadata."""
    return sha256_hex(*sorted(d.content_hash() for d in documents))

"""Writing documents and records as JSONL, atomically and byte-for-byte deterministically:
the inverse of the JSONL corpus loader."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from probeguard.core.documents import Document
from probeguard.core.io import atomic_write_text

__all__ = ["document_record", "documents_to_jsonl", "write_jsonl_atomic"]


def document_record(doc: Document) -> dict[str, Any]:
    """The JSONL record of a document (``source`` is not written: it is not content)."""
    return {"id": doc.id, "title": doc.title, "text": doc.text, "metadata": doc.metadata}


def write_jsonl_atomic(records: Iterable[dict[str, Any]], path: str | Path) -> Path:
    """Write records as JSONL (sorted keys, UTF-8, ``\\n`` line ends) to a temporary file in
    the target folder, then ``os.replace`` it into place: readers never see a partial file.
    Same records → same bytes."""
    lines = [
        json.dumps(record, ensure_ascii=False, sort_keys=True, allow_nan=False) + "\n"
        for record in records
    ]
    return atomic_write_text(path, "".join(lines))


def documents_to_jsonl(docs: Iterable[Document], path: str | Path) -> Path:
    """Write documents as JSONL that ``load_corpus`` reads back to equal documents
    (same ids, titles, texts and metadata); written atomically."""
    return write_jsonl_atomic((document_record(d) for d in docs), path)

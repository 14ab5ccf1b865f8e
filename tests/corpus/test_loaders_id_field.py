"""``id_field``: an explicit id field is required in every record; without one, an id-like
field beside a missing ``id`` is an error instead of silent content ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from probeguard.core.errors import InputError
from probeguard.corpus.loaders import load_corpus


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_doc_id_without_id_field_is_an_error_naming_it(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "c.jsonl", [{"doc_id": "a", "text": "x"}])
    with pytest.raises(InputError) as info:
        load_corpus(path)
    assert (info.value.line, info.value.field) == (1, "doc_id")
    assert "id_field" in str(info.value)
    (doc,) = load_corpus(path, id_field="doc_id")
    assert doc.id == "a"


def test_an_explicit_id_field_must_be_in_every_record(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "c.jsonl", [{"key": "a", "text": "x"}, {"text": "y"}])
    with pytest.raises(InputError) as info:
        load_corpus(path, id_field="key")
    assert (info.value.line, info.value.field) == (2, "key")


def test_records_without_any_id_still_get_content_ids(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "c.jsonl", [{"text": "x", "author": "n"}])
    (doc,) = load_corpus(path)
    assert doc.id and doc.metadata == {"author": "n"}


def test_csv_header_and_text_field(tmp_path: Path) -> None:
    path = tmp_path / "c.csv"
    path.write_text("document_id,body\nd1,hello\n")
    with pytest.raises(InputError) as info:
        load_corpus(path, text_field="body")
    assert (info.value.line, info.value.field) == (1, "document_id")
    (doc,) = load_corpus(path, text_field="body", id_field="document_id")
    assert (doc.id, doc.text) == ("d1", "hello")

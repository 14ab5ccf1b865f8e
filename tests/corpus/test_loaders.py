"""Corpus loaders: every format, every error (file, line and field named), round trips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from probeguard.core.documents import Document, corpus_fingerprint
from probeguard.core.errors import InputError
from probeguard.corpus.jsonl_writer import documents_to_jsonl
from probeguard.corpus.loaders import load_corpus, markdown_title


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return path


def fails(
    path: Path, *, line: int | None, field: str | None, needle: str, **kwargs: object
) -> InputError:
    """Load ``path``, expect an InputError naming file, line and field, return it."""
    with pytest.raises(InputError) as info:
        load_corpus(path, **kwargs)  # type: ignore[arg-type]
    err = info.value
    assert err.file == str(path)
    assert err.line == line
    assert err.field == field
    msg = str(err)
    assert str(path) in msg and needle in msg
    if line is not None:
        assert f"line {line}" in msg
    if field is not None:
        assert f"field '{field}'" in msg
    return err


# --------------------------------------------------------------------------- JSONL


def test_jsonl_loads_records_in_order(tmp_path: Path) -> None:
    p = write(
        tmp_path / "c.jsonl",
        '{"id": "a", "title": "A", "text": "Alpha.", "lang": "en"}\n'
        "\n"
        '{"text": "Beta.", "metadata": {"k": [1, 2]}}\n'
        '{"id": 7, "text": "Gamma.", "title": null}\n',
    )
    docs = load_corpus(p)
    assert [d.id for d in docs] == ["a", Document.content_id("", "Beta."), "7"]
    assert docs[0].title == "A" and docs[0].metadata == {"lang": "en"}
    assert docs[1].metadata == {"k": [1, 2]}
    assert docs[2].title == ""
    assert [d.source for d in docs] == [f"{p}:1", f"{p}:3", f"{p}:4"]


def test_jsonl_custom_field_names(tmp_path: Path) -> None:
    p = write(tmp_path / "c.jsonl", '{"_id": "x", "name": "N", "contents": "Body."}\n')
    (doc,) = load_corpus(p, text_field="contents", id_field="_id", title_field="name")
    assert (doc.id, doc.title, doc.text, doc.metadata) == ("x", "N", "Body.", {})
    fails(p, line=1, field="text", needle="missing document text")


@pytest.mark.parametrize(
    "line2,field,needle",
    [
        ('{"text": "unterminated}', None, "malformed JSON: Unterminated string"),
        ('{"text": NaN}', None, "malformed JSON: NaN is not valid JSON"),
        ('["a list"]', None, "expected a JSON object, got list"),
        ('{"id": "b"}', "text", "missing document text"),
        ('{"text": null}', "text", "missing document text"),
        ('{"text": "   \\n "}', "text", "is empty"),
        ('{"text": ["a"]}', "text", "must be a string, got list"),
        ('{"text": 12}', "text", "must be a string, got number"),
        ('{"text": "t", "metadata": [1]}', "metadata", "must be an object, got list"),
        ('{"text": "t", "metadata": "x"}', "metadata", "must be an object, got string"),
        ('{"text": "t", "title": 3}', "title", "must be a string, got number"),
        ('{"text": "t", "id": true}', "id", "must be a string, got boolean"),
        ('{"text": "t", "id": "  "}', "id", "is empty"),
        (
            '{"text": "t", "lang": "en", "metadata": {"lang": "fr"}}',
            "lang",
            "'lang' is both a top-level field and a metadata key",
        ),
    ],
)
def test_jsonl_errors_name_file_line_field(
    tmp_path: Path, line2: str, field: str | None, needle: str
) -> None:
    p = write(tmp_path / "bad.jsonl", '{"id": "a", "text": "fine"}\n' + line2 + "\n")
    fails(p, line=2, field=field, needle=needle)


def test_jsonl_duplicate_ids_name_both_lines(tmp_path: Path) -> None:
    p = write(
        tmp_path / "d.jsonl", '{"id": "x", "text": "a"}\n{"text": "b"}\n{"id": "x", "text": "c"}\n'
    )
    err = fails(p, line=3, field="id", needle="duplicate id 'x'")
    assert "first at line 1, again at line 3" in str(err)


def test_jsonl_duplicate_content_is_an_error(tmp_path: Path) -> None:
    p = write(tmp_path / "d.jsonl", '{"text": "same"}\n{"text": "other"}\n{"text": "same"}\n')
    err = fails(p, line=3, field="id", needle="duplicate document (same title and text")
    assert "first at line 1" in str(err)


def test_jsonl_bad_utf8_names_the_line(tmp_path: Path) -> None:
    p = write(tmp_path / "e.jsonl", b'{"text": "a"}\n{"text": "b"}\n{"text": "\xff\xfe"}\n')
    fails(p, line=3, field=None, needle="not valid UTF-8")


def test_jsonl_bom_and_crlf_are_accepted(tmp_path: Path) -> None:
    p = write(tmp_path / "b.jsonl", b'\xef\xbb\xbf{"text": "a"}\r\n{"text": "b"}\r\n')
    assert [d.text for d in load_corpus(p)] == ["a", "b"]


def test_empty_corpus_is_an_error(tmp_path: Path) -> None:
    fails(
        write(tmp_path / "e.jsonl", "\n  \n"),
        line=None,
        field=None,
        needle="the corpus has no documents",
    )
    fails(
        write(tmp_path / "e.json", "[]"),
        line=None,
        field=None,
        needle="the corpus has no documents",
    )


# --------------------------------------------------------------------------- JSON


def test_json_list_and_documents_object(tmp_path: Path) -> None:
    records = [{"id": "a", "text": "Alpha."}, {"id": "b", "title": "B", "text": "Beta."}]
    p1 = write(tmp_path / "l.json", json.dumps(records, indent=2))
    p2 = write(tmp_path / "o.json", json.dumps({"name": "x", "documents": records}, indent=1))
    d1, d2 = load_corpus(p1), load_corpus(p2)
    assert [d.id for d in d1] == [d.id for d in d2] == ["a", "b"]
    assert corpus_fingerprint(d1) == corpus_fingerprint(d2)
    # the line each item starts on: "[", "  {", id, text, "  },", "  {"
    assert [d.source for d in d1] == [f"{p1}:2", f"{p1}:6"]


def test_json_item_errors_give_item_and_line(tmp_path: Path) -> None:
    p = write(
        tmp_path / "bad.json", '[\n  {"id": "a", "text": "x"},\n  {"id": "b",\n   "text": 5}\n]\n'
    )
    err = fails(p, line=3, field="text", needle="item [1]: must be a string, got number")
    assert err.reason.startswith("item [1]")
    p = write(
        tmp_path / "bad2.json",
        '{"meta": {"a": [1, {"b": 2}]},\n "documents": [\n {"text": "ok"},\n {"text": ""}]}',
    )
    fails(p, line=4, field="text", needle="item documents[1]: is empty")


def test_json_malformed_and_wrong_shape(tmp_path: Path) -> None:
    fails(
        write(tmp_path / "m.json", '[{"text": "a"},\n {"text": "b"\n]'),
        line=3,
        field=None,
        needle="malformed JSON",
    )
    fails(
        write(tmp_path / "s.json", '{"docs": []}'),
        line=1,
        field=None,
        needle='expected a JSON list of objects or {"documents": [...]}, got dict',
    )
    fails(
        write(tmp_path / "n.json", '[{"text": "a"}, 3]'),
        line=1,
        field=None,
        needle="item [1]: expected a JSON object, got number",
    )


def test_json_duplicate_ids_name_both_items(tmp_path: Path) -> None:
    p = write(tmp_path / "d.json", '[{"id": "x", "text": "a"},\n{"id": "x", "text": "b"}]')
    err = fails(p, line=2, field="id", needle="duplicate id 'x'")
    assert "first at line 1 (item [0]), again at line 2 (item [1])" in str(err)


# --------------------------------------------------------------------------- CSV


def test_csv_columns_and_metadata(tmp_path: Path) -> None:
    p = write(
        tmp_path / "c.csv",
        'id,title,text,lang\r\n1,T,"multi\r\nline, with comma",en\r\n2,,Plain.,fr\r\n',
    )
    docs = load_corpus(p)
    assert [(d.id, d.title, d.text, d.metadata) for d in docs] == [
        ("1", "T", "multi\nline, with comma", {"lang": "en"}),
        ("2", "", "Plain.", {"lang": "fr"}),
    ]
    assert [d.source for d in docs] == [f"{p}:2", f"{p}:4"]


def test_csv_without_id_column_uses_content_ids(tmp_path: Path) -> None:
    p = write(tmp_path / "c.csv", "text\nAlpha.\nBeta.\n")
    assert [d.id for d in load_corpus(p)] == [
        Document.content_id("", "Alpha."),
        Document.content_id("", "Beta."),
    ]


@pytest.mark.parametrize(
    "body,line,field,needle",
    [
        ("id,title,body\n1,a,b\n", 1, "text", "no 'text' column; the header has: id, title, body"),
        ("id,text,text\n1,a,b\n", 1, "text", "duplicate column(s) in the header: text"),
        ('id,text\n1,ok\n2,"multi\nline"\n3,\n', 5, "text", "is empty"),
        ("id,text\n1,ok\n2,a,extra\n", 3, None, "the row has 3 fields but the header has 2"),
        ("id,text\n1,ok\n1,again\n", 3, "id", "duplicate id '1': first at line 2"),
        ("", 1, None, "the CSV file is empty"),
    ],
)
def test_csv_errors(tmp_path: Path, body: str, line: int, field: str | None, needle: str) -> None:
    fails(write(tmp_path / "bad.csv", body), line=line, field=field, needle=needle)


def test_csv_header_only_is_an_empty_corpus(tmp_path: Path) -> None:
    fails(
        write(tmp_path / "h.csv", "id,text\n"),
        line=None,
        field=None,
        needle="the corpus has no documents",
    )


# --------------------------------------------------------------------------- folders


def test_folder_of_text_and_markdown(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    write(root / "b.txt", "# not a heading in txt\nPlain text.\n")
    write(root / "a" / "guide.md", "Intro line\n\n```\n# code comment\n```\n## Setup ##\nBody\n")
    write(root / "a" / "notes.markdown", "No heading here.\n")
    write(root / ".hidden" / "x.md", "# Hidden\n")
    write(root / ".secret.txt", "hidden\n")
    write(root / "image.png", "not text")
    docs = load_corpus(root)
    assert [d.id for d in docs] == ["a/guide", "a/notes", "b"]
    assert [d.title for d in docs] == ["Setup", "notes", "b"]
    assert [d.source for d in docs] == ["a/guide.md", "a/notes.markdown", "b.txt"]
    assert docs[2].text == "# not a heading in txt\nPlain text.\n"
    assert load_corpus(root, format="dir") == docs


def test_folder_errors(tmp_path: Path) -> None:
    root = tmp_path / "d"
    write(root / "x.md", "# X\ntext")
    write(root / "x.txt", "other")
    err = fails(root / "x.txt", line=None, field=None, needle="suffix '.txt'")
    assert "pass format=" in str(err)
    with pytest.raises(InputError, match="duplicate id 'x': files x.md and x.txt") as info:
        load_corpus(root)
    assert info.value.file == str(root / "x.txt") and info.value.field == "id"
    (root / "x.txt").unlink()
    write(root / "sub" / "empty.md", "  \n")
    with pytest.raises(InputError, match="the file is empty") as info:
        load_corpus(root)
    assert info.value.file == str(root / "sub" / "empty.md") and info.value.field == "text"
    (root / "sub" / "empty.md").write_bytes(b"ok \xc3\x28 bad\n")
    with pytest.raises(InputError, match="not valid UTF-8") as info:
        load_corpus(root)
    assert info.value.line == 1
    fails(
        write(tmp_path / "empty" / "readme.rst", "x").parent,
        line=None,
        field=None,
        needle="the corpus has no documents",
    )


def test_markdown_title() -> None:
    assert markdown_title("text\n# First #\n# Second") == "First"
    assert markdown_title("~~~\n# in fence\n~~~\n   ### Three  \n") == "Three"
    assert markdown_title("#nospace\n    # indented code") is None


# --------------------------------------------------------------------------- dispatch


def test_dispatch_errors(tmp_path: Path) -> None:
    fails(tmp_path / "missing.jsonl", line=None, field=None, needle="no such file or folder")
    p = write(tmp_path / "c.data", '{"text": "a"}\n')
    fails(p, line=None, field=None, needle="cannot tell the corpus format")
    assert [d.text for d in load_corpus(p, format="jsonl")] == ["a"]
    fails(p, line=None, field=None, needle="unknown corpus format 'xml'", format="xml")
    fails(tmp_path, line=None, field=None, needle="format 'jsonl' needs a file", format="jsonl")
    with pytest.raises(ValueError, match="must differ"):
        load_corpus(p, format="jsonl", text_field="id")


# --------------------------------------------------------------------------- writing


def test_documents_to_jsonl_round_trips_and_is_deterministic(tmp_path: Path) -> None:
    docs = [
        Document.create(
            "Alpha.\nwith newline",
            id="a",
            title="A",
            metadata={"z": 1, "a": {"nested": ["x", "ü"]}},
        ),
        Document.create("Beta — ünïcödé 日本", title="B"),
    ]
    out = documents_to_jsonl(docs, tmp_path / "sub" / "corpus.jsonl")
    assert out == tmp_path / "sub" / "corpus.jsonl"
    back = load_corpus(out)
    assert [d.content_hash() for d in back] == [d.content_hash() for d in docs]
    first = out.read_bytes()
    documents_to_jsonl(list(reversed(back))[::-1], out)  # same docs from the loader
    assert out.read_bytes() == first
    assert first.decode("utf-8").count("\n") == 2 and "ü" in first.decode("utf-8")
    assert [p.name for p in out.parent.iterdir()] == ["corpus.jsonl"]  # no temp file left


def test_documents_to_jsonl_leaves_old_file_on_failure(tmp_path: Path) -> None:
    out = documents_to_jsonl([Document.create("keep", id="k")], tmp_path / "c.jsonl")
    before = out.read_bytes()
    bad = Document.create("x", id="bad", metadata={"v": float("nan")})
    with pytest.raises(ValueError):
        documents_to_jsonl([Document.create("new", id="n"), bad], out)
    assert out.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["c.jsonl"]


# -- hardening (issue 17) ------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["deep.jsonl", "deep.json"])
def test_deeply_nested_json_is_an_input_error(tmp_path, name):
    path = tmp_path / name
    nested = "[" * 100_000 + "]" * 100_000
    body = '{"text": "t", "metadata": ' + nested + "}" if name.endswith("l") else nested
    path.write_text(body + "\n")
    with pytest.raises(InputError, match="nested too deeply"):
        load_corpus(path)


def test_unclosed_csv_quote_names_the_row_where_it_opens(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text('id,text\na,fine\nb,"never closed\nc,more\n')
    with pytest.raises(InputError, match=r"line 3: malformed CSV: a quoted field"):
        load_corpus(path)

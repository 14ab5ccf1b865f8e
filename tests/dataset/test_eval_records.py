"""Eval datasets: CSV, XLSX, JSON and JSONL load the same records; a bad record names the
file, the row (CSV/XLSX) or line (JSON/JSONL), and the field."""

from __future__ import annotations

import csv
import json

import pytest

from probeguard.core.errors import InputError
from probeguard.dataset.eval_records import EvalRecord, load_eval_records

RECORDS = [
    {
        "id": "r1",
        "input": "How long is the return window?",
        "answer": "Items can be returned within 30 days.",
        "groundTruth": "30 days",
        "retrievalContext": ["Items can be returned within 30 days.", "Shipping is free."],
        "retrievalRelevance": [True, False],
        "tags": ["returns", "policy"],
    },
    {
        "id": "r2",
        "input": "Who founded Kestrel?",
        "retrievalContext": ["Kestrel was founded by Ada Byron in 1990."],
        "tags": ["company"],
    },
    {"id": "r3", "input": "What does shipping cost?", "answer": "Shipping is free.", "tags": []},
]
CELLS = ["id", "input", "answer", "groundTruth", "retrievalContext", "retrievalRelevance", "tags"]


def _cell(record: dict, key: str) -> str:
    value = record.get(key)
    if value is None:
        return ""
    if key == "tags":
        return ",".join(value)
    return json.dumps(value) if isinstance(value, list) else str(value)


def write_dataset(path, records, fmt):
    if fmt == "jsonl":
        path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    elif fmt == "json":
        path.write_text(json.dumps({"records": records}, indent=2))
    elif fmt == "csv":
        with path.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(CELLS)
            for r in records:
                writer.writerow([_cell(r, k) for k in CELLS])
    else:
        import openpyxl

        book = openpyxl.Workbook()
        sheet = book.active
        sheet.append(CELLS)
        for r in records:
            sheet.append([_cell(r, k) or None for k in CELLS])
        book.save(path)
    return path


EXPECTED = [
    EvalRecord(
        "r1",
        "How long is the return window?",
        "Items can be returned within 30 days.",
        "30 days",
        ("Items can be returned within 30 days.", "Shipping is free."),
        (True, False),
        ("returns", "policy"),
    ),
    EvalRecord(
        "r2",
        "Who founded Kestrel?",
        None,
        None,
        ("Kestrel was founded by Ada Byron in 1990.",),
        None,
        ("company",),
    ),
    EvalRecord("r3", "What does shipping cost?", "Shipping is free.", None, None, None, ()),
]


@pytest.mark.parametrize("fmt", ["csv", "xlsx", "json", "jsonl"])
def test_every_format_loads_the_same_records(tmp_path, fmt):
    path = write_dataset(tmp_path / f"data.{fmt}", RECORDS, fmt)
    got = load_eval_records(path)
    assert [r.__dict__ | {"source": ""} for r in got] == [e.__dict__ for e in EXPECTED]
    assert got[0].source.startswith("data.")


def test_csv_tags_may_be_a_json_list_and_ids_default_to_the_row(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text('input,tags\n"Q one?","[""a"", ""b""]"\n\n"Q two?",x\n')
    one, two = load_eval_records(path)
    assert (one.id, one.tags, two.id, two.tags) == ("row-1", ("a", "b"), "row-2", ("x",))


@pytest.mark.parametrize(
    "fmt, row, place",
    [
        ("csv", 2, "row 2"),
        ("xlsx", 2, "row 2 (sheet row 3)"),
        ("jsonl", 2, "line 2"),
        ("json", 2, "line"),
    ],
)
def test_bad_context_names_row_and_field(tmp_path, fmt, row, place):
    records = [dict(RECORDS[0]), {"input": "Q?", "retrievalContext": [1, 2]}]
    if fmt in ("csv", "xlsx"):
        records[1]["retrievalContext"] = None
    path = write_dataset(tmp_path / f"bad.{fmt}", records, fmt)
    if fmt in ("csv", "xlsx"):  # a cell that is not a JSON list
        if fmt == "csv":
            header_and_first = path.read_text().splitlines()[:2]
            path.write_text("\n".join(header_and_first) + "\n,Q?,,,not a list,,\n")
        else:
            import openpyxl

            book = openpyxl.load_workbook(path)
            book.active.cell(row=3, column=5, value="not a list")
            book.save(path)
    with pytest.raises(InputError) as info:
        load_eval_records(path)
    err = info.value
    assert err.field == "retrievalContext" and str(path) in str(err)
    assert place in str(err)


@pytest.mark.parametrize(
    "record, field, words",
    [
        ({"answer": "x"}, "input", "missing"),
        (
            {"input": "Q?", "retrievalRelevance": [True]},
            "retrievalRelevance",
            "without retrievalContext",
        ),
        (
            {"input": "Q?", "retrievalContext": ["a", "b"], "retrievalRelevance": [True]},
            "retrievalRelevance",
            "1 labels for 2 contexts",
        ),
        (
            {"input": "Q?", "retrievalContext": ["a"], "retrievalRelevance": ["yes"]},
            "retrievalRelevance",
            "true or false",
        ),
        ({"input": "Q?", "ground_truth": "x"}, "ground_truth", "unknown field"),
        ({"input": 3}, "input", "must be a string"),
    ],
)
def test_bad_fields_are_named(tmp_path, record, field, words):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"input": "ok?"}) + "\n" + json.dumps(record) + "\n")
    with pytest.raises(InputError) as info:
        load_eval_records(path)
    assert info.value.line == 2 and info.value.field == field and words in str(info.value)


def test_duplicate_ids_empty_files_and_unknown_formats(tmp_path):
    dup = tmp_path / "d.jsonl"
    dup.write_text('{"id": "a", "input": "x?"}\n{"id": "a", "input": "y?"}\n')
    with pytest.raises(InputError, match="duplicate id 'a' \\(first at d.jsonl:line 1\\)"):
        load_eval_records(dup)
    empty = tmp_path / "e.json"
    empty.write_text("[]")
    with pytest.raises(InputError, match="no records"):
        load_eval_records(empty)
    with pytest.raises(InputError, match="unknown dataset format"):
        load_eval_records(tmp_path / "d.parquet")
    noinput = tmp_path / "n.csv"
    noinput.write_text("question\nx\n")
    with pytest.raises(InputError) as info:
        load_eval_records(noinput)
    assert info.value.field == "input" and info.value.line == 1


def test_missing_openpyxl_names_the_extra(tmp_path, monkeypatch):
    import builtins

    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name == "openpyxl":
            raise ImportError("no openpyxl")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake)
    (tmp_path / "d.xlsx").write_bytes(b"")
    with pytest.raises(ImportError, match=r'pip install "probeguard\[xlsx\]"'):
        load_eval_records(tmp_path / "d.xlsx")


# -- hardening (issue 17) ------------------------------------------------------------------------
def test_minified_json_without_ids_gets_one_id_per_item(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps([{"input": "q1", "answer": "a"}, {"input": "q2", "answer": "b"}]))
    records = load_eval_records(path)
    assert [r.id for r in records] == ["item-1", "item-2"]


def test_unclosed_csv_quote_is_named(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text('input,answer\nq1,a\nq2,"open\nq3,c\n')
    with pytest.raises(InputError, match=r"line 3: malformed CSV: a quoted field"):
        load_eval_records(path)


def test_xlsx_formula_without_cached_value_is_named(tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["input", "answer"])
    sheet.append(["q1", '=CONCATENATE("a", "b")'])  # openpyxl stores no cached value
    path = tmp_path / "d.xlsx"
    book.save(path)
    with pytest.raises(InputError, match=r"field 'answer': row 1 .*formula"):
        load_eval_records(path)

"""The paraphrase word lists ship as package data: found through importlib.resources, each
non-empty, no repeated key, its source and licence stated, and covered by the package-data
glob so that a wheel carries it."""

from __future__ import annotations

import fnmatch
import tomllib
from collections import Counter
from importlib import resources
from pathlib import Path

import pytest

from probeguard.nlp import wordlists
from probeguard.nlp.paraphrase import JARGON, SYNONYMS
from probeguard.nlp.wordlists import data_files, word_list, word_table

ROOT = Path(__file__).resolve().parents[2]
DATA = resources.files("probeguard.nlp").joinpath("data")
FILES = data_files()


def _raw_keys(text: str, table: bool) -> list[str]:
    lines = [line.strip() for line in text.splitlines()]
    entries = [line for line in lines if line and not line.startswith("#")]
    return [e.split("\t")[0].strip() for e in entries] if table else entries


def test_data_files_are_found_through_importlib_resources():
    assert DATA.is_dir()
    names = {f.name for f in DATA.iterdir() if f.is_file()}
    assert "README.md" in names
    assert set(FILES) == {n for n in names if n.endswith((".txt", ".tsv"))}
    assert {"synonyms.tsv", "jargon.tsv", "verbs.txt", "irregular_past.tsv"} <= set(FILES)


@pytest.mark.parametrize("file_name", FILES)
def test_every_list_loads_non_empty_with_no_duplicate_keys(file_name: str):
    name, suffix = file_name.rsplit(".", 1)
    loaded = word_table(name) if suffix == "tsv" else word_list(name)
    assert loaded
    raw = _raw_keys(DATA.joinpath(file_name).read_text(encoding="utf-8"), suffix == "tsv")
    repeated = [key for key, count in Counter(raw).items() if count > 1]
    assert not repeated, f"{file_name}: repeated keys {repeated}"
    assert len(loaded) == len(raw)
    if suffix == "tsv":
        assert len({len(row) for row in loaded}) == 1 and all(all(row) for row in loaded)
    else:
        assert all(entry and "\t" not in entry for entry in loaded)


@pytest.mark.parametrize("file_name", FILES)
def test_every_list_states_its_source_and_licence(file_name: str):
    header = [
        line
        for line in DATA.joinpath(file_name).read_text(encoding="utf-8").splitlines()
        if line.startswith("#")
    ]
    text = " ".join(header)
    assert "Source:" in text and "Licence: Apache-2.0" in text
    readme = DATA.joinpath("README.md").read_text(encoding="utf-8")
    assert f"`{file_name}`" in readme


def test_the_package_data_glob_ships_every_list():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["probeguard"]
    for name in (*FILES, "README.md"):
        assert any(fnmatch.fnmatch(f"nlp/data/{name}", p) for p in patterns), name


def test_lists_are_read_once():
    word_list.cache_clear()
    word_table.cache_clear()
    assert word_list("verbs") is word_list("verbs")
    assert word_table("synonyms") is word_table("synonyms")
    assert word_list.cache_info().misses == 1 and word_table.cache_info().misses == 1


def test_tables_come_from_the_data_files():
    assert len(SYNONYMS) == len(word_table("synonyms"))
    assert len(JARGON) == len(word_table("jargon"))
    key, alts = word_table("synonyms")[0]
    assert SYNONYMS[key] == tuple(a.strip() for a in alts.split(","))


@pytest.mark.parametrize(
    ("content", "call", "message"),
    [
        ("# header only\n", ("list", "bad_empty"), "empty"),
        ("one\ntwo\none\n", ("list", "bad_repeat"), r"line 3: 'one' repeats line 1"),
        ("a\tb\na\tc\n", ("table", "bad_key"), r"line 2: key 'a' repeats line 1"),
        ("a\tb\nc\n", ("table", "bad_short"), r"line 2: expected at least two"),
        ("a\tb\nc\td\te\n", ("table", "bad_width"), r"line 2: 3 fields"),
    ],
)
def test_a_bad_list_is_an_error_naming_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str, call, message: str
):
    kind, name = call  # the loaders cache by name: one name per case
    (tmp_path / f"{name}.{'tsv' if kind == 'table' else 'txt'}").write_text(content)
    monkeypatch.setattr(wordlists, "data_dir", lambda: tmp_path)
    loader = word_table if kind == "table" else word_list
    with pytest.raises(ValueError, match=message):
        loader(name)


def test_a_missing_list_is_an_error():
    with pytest.raises(FileNotFoundError, match="no word list"):
        word_list("no_such_list")

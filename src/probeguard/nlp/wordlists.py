"""Word lists shipped as package data, in ``probeguard/nlp/data/``, each read once.

One list per file. ``NAME.txt`` holds one entry per line (``word_list("NAME")``);
``NAME.tsv`` one row per line, fields separated by tabs, the first field the row's key
(``word_table("NAME")``). Blank lines and lines starting with ``#`` are skipped: each file opens
with such a header saying what the list is for, where it comes from and under which licence;
``data/README.md`` lists them all. A list with no entries, a repeated entry or key, or a row
with an empty field is an error naming the file and line.

The files are read through ``importlib.resources``, so they are found in a source checkout,
an installed wheel or a zip alike (``pyproject.toml`` ships ``nlp/data/*`` as package data).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable

__all__ = ["data_dir", "data_files", "word_list", "word_table"]

_SUFFIXES = (".txt", ".tsv")


def data_dir() -> Traversable:
    """The folder of word-list files, as ``importlib.resources`` sees it."""
    return resources.files("probeguard.nlp").joinpath("data")


def data_files() -> tuple[str, ...]:
    """File names of every word list (``*.txt`` and ``*.tsv``), sorted."""
    return tuple(
        sorted(f.name for f in data_dir().iterdir() if f.is_file() and f.name.endswith(_SUFFIXES))
    )


@cache
def _entries(file_name: str) -> tuple[tuple[int, str], ...]:
    """``(line number, stripped line)`` of the file's non-blank, non-comment lines."""
    path = data_dir().joinpath(file_name)
    if not path.is_file():
        raise FileNotFoundError(f"no word list {file_name!r} in probeguard/nlp/data")
    out: list[tuple[int, str]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = line.strip()
        if line and not line.startswith("#"):
            out.append((number, line))
    if not out:
        raise ValueError(f"probeguard/nlp/data/{file_name}: the list is empty")
    return tuple(out)


@cache
def word_list(name: str) -> tuple[str, ...]:
    """The entries of ``data/NAME.txt``, in file order."""
    file_name = f"{name}.txt"
    seen: dict[str, int] = {}
    for number, entry in _entries(file_name):
        if entry in seen:
            raise ValueError(
                f"probeguard/nlp/data/{file_name} line {number}: {entry!r} repeats line "
                f"{seen[entry]}"
            )
        seen[entry] = number
    return tuple(seen)


@cache
def word_table(name: str) -> tuple[tuple[str, ...], ...]:
    """The rows of ``data/NAME.tsv``, in file order, each a tuple of its stripped fields
    (at least two, none empty, as many in every row); first fields are unique."""
    file_name = f"{name}.tsv"
    rows: list[tuple[str, ...]] = []
    seen: dict[str, int] = {}
    for number, line in _entries(file_name):
        row = tuple(field.strip() for field in line.split("\t"))
        where = f"probeguard/nlp/data/{file_name} line {number}"
        if len(row) < 2 or not all(row):
            raise ValueError(f"{where}: expected at least two tab-separated fields in {line!r}")
        if rows and len(row) != len(rows[0]):
            raise ValueError(f"{where}: {len(row)} fields, the first row has {len(rows[0])}")
        if row[0] in seen:
            raise ValueError(f"{where}: key {row[0]!r} repeats line {seen[row[0]]}")
        seen[row[0]] = number
        rows.append(row)
    return tuple(rows)

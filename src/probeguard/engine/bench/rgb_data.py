"""RGB's counterfactual-robustness set (Chen et al. 2024, "Benchmarking Large Language Models
in Retrieval-Augmented Generation", AAAI; ``rgb/en_fact.json``, CC BY-NC-SA 4.0: read it in a
benchmark, never ship or copy it). JSONL despite the name, one question a line:

    {"id": 0, "query": "...", "answer": "Tampa, Florida" | [["variant", ...]],
     "fakeanswer": "Glendale, Arizona", "positive": ["passage", ...],
     "positive_wrong": ["the same passage with the answer swapped for fakeanswer", ...],
     "negative": ["noise passage", ...]}

``load_rgb`` validates each line (an ``InputError`` names the file, line and field) and
flattens ``answer`` (a string, or nested lists of acceptable variants) to a tuple of strings.
``build_corpus`` makes the retrievable documents of one corpus kind over every question.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probeguard.core.cases import Case, Expected
from probeguard.core.documents import Document
from probeguard.core.errors import InputError

__all__ = [
    "CORPORA",
    "DATA_FILE",
    "RgbItem",
    "build_cases",
    "build_corpus",
    "default_data_file",
    "flatten_answers",
    "load_rgb",
]

DATA_FILE = Path("rgb") / "en_fact.json"

CORPORA: dict[str, tuple[str, ...]] = {
    "clean": ("positive", "negative"),
    "counterfactual": ("positive_wrong", "negative"),
}
"""Corpus kind → the passage fields it holds. ``counterfactual`` is RGB's test: the answer
passages are replaced by their edited copies (plus the noise passages); ``clean`` is the
baseline with the true passages."""

_SHORT = {"positive": "pos", "positive_wrong": "fake", "negative": "neg"}


@dataclass(frozen=True)
class RgbItem:
    id: str
    query: str
    answers: tuple[str, ...]
    """Acceptable true answers (flattened)."""
    fake_answer: str
    passages: dict[str, tuple[str, ...]]
    """``positive``, ``positive_wrong``, ``negative``: the non-blank passages of each."""


def default_data_file() -> Path:
    """``$PROBEGUARD_SHARED_DATA/rgb/en_fact.json`` or ``../shared/data/rgb/en_fact.json``."""
    root = os.environ.get("PROBEGUARD_SHARED_DATA") or str(Path("..") / "shared" / "data")
    return Path(root) / DATA_FILE


def flatten_answers(value: Any) -> tuple[str, ...]:
    """A string, or (nested) lists of strings, as a tuple of the non-blank strings, first
    occurrence order, duplicates dropped; () for anything else."""
    if isinstance(value, str):
        return (value.strip(),) if value.strip() else ()
    if isinstance(value, list):
        flat = [a for v in value for a in flatten_answers(v)]
        return tuple(dict.fromkeys(flat))
    return ()


def _item(raw: Any, path: Path, line: int) -> RgbItem:
    def bad(field: str, what: str) -> InputError:
        return InputError(what, file=str(path), line=line, field=field)

    if not isinstance(raw, dict):
        raise bad("", "not a JSON object")
    if not isinstance(raw.get("query"), str) or not raw["query"].strip():
        raise bad("query", "missing or blank")
    answers = flatten_answers(raw.get("answer"))
    if not answers:
        raise bad("answer", "no answer string")
    fake = raw.get("fakeanswer")
    if not isinstance(fake, str) or not fake.strip():
        raise bad("fakeanswer", "missing or blank")
    passages = {}
    for key in _SHORT:
        value = raw.get(key)
        if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
            raise bad(key, "missing or not a list of strings")
        passages[key] = tuple(p.strip() for p in value if p.strip())
    return RgbItem(
        id=str(raw.get("id", line - 1)),
        query=raw["query"].strip(),
        answers=answers,
        fake_answer=fake.strip(),
        passages=passages,
    )


def load_rgb(path: str | Path) -> list[RgbItem]:
    """Every question of an ``en_fact.json``-format file (module doc), file order."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    items = []
    for n, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", file=str(path), line=n) from None
        items.append(_item(raw, path, n))
    if not items:
        raise InputError("no questions", file=str(path))
    return items


def passage_id(item: RgbItem, field: str, j: int) -> str:
    return f"rgb{item.id}-{_SHORT[field]}{j}"


def build_corpus(items: Sequence[RgbItem], kind: str) -> list[Document]:
    """The passages of ``CORPORA[kind]`` of every item, one document each (ids
    ``rgb<id>-pos<j>`` / ``-fake<j>`` / ``-neg<j>``)."""
    return [
        Document(id=passage_id(it, field, j), text=text, source=f"rgb:{it.id}")
        for it in items
        for field in CORPORA[kind]
        for j, text in enumerate(it.passages[field])
    ]


def build_cases(items: Sequence[RgbItem], kind: str) -> list[Case]:
    """One case per item: the true answers expected, its answer passages of ``kind`` as the
    gold evidence, the fake answer in ``meta``."""
    field = CORPORA[kind][0]
    return [
        Case(
            id=f"rgb{it.id}/{kind}",
            question=it.query,
            expected=Expected(
                answers=it.answers,
                evidence_doc_ids=tuple(
                    passage_id(it, field, j) for j in range(len(it.passages[field]))
                ),
            ),
            tags=("rgb", kind),
            meta={"fake_answer": it.fake_answer},
        )
        for it in items
    ]

"""ClapNQ's dev set (Rosenthal et al. 2024, "CLAPNQ: Cohesive Long-form Answers from Passages
in Natural Questions for RAG systems"; Apache 2.0, passages Wikipedia CC BY-SA 3.0):
``clapnq/clapnq_dev_answerable.jsonl`` and ``clapnq_dev_unanswerable.jsonl``, one question a
line:

    {"id": "...", "input": "question", "passages": [{"title": "...", "text": "...",
      "sentences": [...]}], "output": [{"answer": "long-form answer", ...}, ...]}

Every row has exactly one passage: the gold passage for an answerable question, a passage of
the same page that does not answer it for an unanswerable one (whose answers are ``""``).
``load_clapnq`` reads one file (an ``InputError`` names the file, line and field).
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
from probeguard.core.pipeline import Variation

__all__ = [
    "FILES",
    "ClapnqItem",
    "build_cases",
    "build_corpus",
    "data_files",
    "default_data_dir",
    "doc_id",
    "load_clapnq",
]

FILES = {
    True: Path("clapnq") / "clapnq_dev_answerable.jsonl",
    False: Path("clapnq") / "clapnq_dev_unanswerable.jsonl",
}
"""Answerable? → the file, relative to the shared-data folder."""


@dataclass(frozen=True)
class ClapnqItem:
    id: str
    question: str
    title: str
    passage: str
    answers: tuple[str, ...]
    """The human long-form answers (empty for an unanswerable question)."""
    answerable: bool
    row: int
    """0-based line of the item in its file."""


def default_data_dir() -> Path:
    """``$PROBEGUARD_SHARED_DATA`` or ``../shared/data``."""
    return Path(os.environ.get("PROBEGUARD_SHARED_DATA") or Path("..") / "shared" / "data")


def data_files(root: Path) -> list[Path]:
    """The two files under ``root``, answerable first."""
    return [root / FILES[True], root / FILES[False]]


def _item(raw: Any, path: Path, line: int, answerable: bool) -> ClapnqItem:
    def bad(field: str, what: str) -> InputError:
        return InputError(what, file=str(path), line=line, field=field)

    if not isinstance(raw, dict):
        raise bad("", "not a JSON object")
    question = raw.get("input")
    if not isinstance(question, str) or not question.strip():
        raise bad("input", "missing or blank")
    passages = raw.get("passages")
    if not isinstance(passages, list) or len(passages) != 1 or not isinstance(passages[0], dict):
        raise bad("passages", "must be a list of exactly one passage object")
    text, title = passages[0].get("text"), passages[0].get("title", "")
    if not isinstance(text, str) or not text.strip():
        raise bad("passages[0].text", "missing or blank")
    outputs = raw.get("output")
    if not isinstance(outputs, list) or not all(isinstance(o, dict) for o in outputs):
        raise bad("output", "missing or not a list of objects")
    answers = tuple(
        o["answer"].strip()
        for o in outputs
        if isinstance(o.get("answer"), str) and o["answer"].strip()
    )
    if answerable and not answers:
        raise bad("output", "an answerable question without a long answer")
    return ClapnqItem(
        id=str(raw.get("id", line)),
        question=question.strip(),
        title=title if isinstance(title, str) else "",
        passage=text.strip(),
        answers=answers if answerable else (),
        answerable=answerable,
        row=line - 1,
    )


def load_clapnq(path: str | Path, *, answerable: bool) -> list[ClapnqItem]:
    """Every question of one ClapNQ file (module doc), file order."""
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
        items.append(_item(raw, path, n, answerable))
    return items


def doc_id(item: ClapnqItem) -> str:
    """``clapnq-a<row>`` (answerable file) or ``clapnq-u<row>``."""
    return f"clapnq-{'a' if item.answerable else 'u'}{item.row}"


def build_corpus(items: Sequence[ClapnqItem]) -> list[Document]:
    """One document per item's passage, titled with its page."""
    return [Document(id=doc_id(it), text=it.passage, title=it.title) for it in items]


def build_cases(items: Sequence[ClapnqItem], condition: str) -> list[Case]:
    """One case per item: answerable → the long answers expected and its passage as evidence;
    unanswerable → ``mode="abstain"``. Under ``oracle`` its passage is the only context."""
    return [
        Case(
            id=f"{doc_id(it)}/{condition}",
            question=it.question,
            expected=Expected(answers=it.answers, evidence_doc_ids=(doc_id(it),))
            if it.answerable
            else Expected(mode="abstain"),
            variation=Variation(contexts=(it.passage,)) if condition == "oracle" else Variation(),
            tags=("clapnq", condition, "answerable" if it.answerable else "unanswerable"),
        )
        for it in items
    ]

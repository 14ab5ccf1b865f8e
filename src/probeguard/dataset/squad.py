"""SQuAD v1.1-format QA files (Rajpurkar et al. 2016), such as XQuAD's English file
(``xquad.en.json``; Artetxe et al. 2020, CC BY-SA 4.0): articles of paragraphs, each
paragraph with its questions and their answer spans.

    {"version": "1.1", "data": [{"title": "...", "paragraphs": [{"context": "...",
      "qas": [{"id": "...", "question": "...", "answers": [{"answer_start": 34, "text": "308"}]}]}]}]}

``load_squad`` flattens it to one ``SquadItem`` per question, in file order, keeping every
gold answer text (XQuAD keeps one per question, SQuAD's dev file usually three).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probeguard.core.errors import InputError

__all__ = ["SquadItem", "load_squad"]


@dataclass(frozen=True)
class SquadItem:
    id: str
    """SQuAD's question id."""
    question: str
    answers: tuple[str, ...]
    """Gold answer texts, first one first (at least one)."""
    context: str
    """The paragraph the answers are spans of."""
    title: str
    """The article (Wikipedia page) the paragraph belongs to."""
    paragraph: int
    """0-based index of the paragraph in the file (over all articles)."""


def _field(raw: Any, key: str, kind: type, path: Path, where: str) -> Any:
    value = raw.get(key) if isinstance(raw, dict) else None
    if not isinstance(value, kind):
        raise InputError(f"{where}: missing or not a {kind.__name__}", file=str(path), field=key)
    return value


def load_squad(path: str | Path) -> list[SquadItem]:
    """Every question of a SQuAD v1.1-format file; a malformed entry names its place and
    field (``InputError``)."""
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", file=str(path), line=exc.lineno) from None
    items: list[SquadItem] = []
    paragraph = 0
    for a, article in enumerate(_field(raw, "data", list, path, "top level")):
        title = _field(article, "title", str, path, f"data[{a}]")
        for p, para in enumerate(_field(article, "paragraphs", list, path, f"data[{a}]")):
            where = f"data[{a}].paragraphs[{p}]"
            context = _field(para, "context", str, path, where)
            for q, qa in enumerate(_field(para, "qas", list, path, where)):
                at = f"{where}.qas[{q}]"
                answers = _field(qa, "answers", list, path, at)
                texts = tuple(
                    _field(ans, "text", str, path, f"{at}.answers[{i}]").strip()
                    for i, ans in enumerate(answers)
                )
                if not texts or not all(texts):
                    raise InputError(f"{at}: no non-empty answer", file=str(path), field="answers")
                items.append(
                    SquadItem(
                        id=str(_field(qa, "id", str, path, at)),
                        question=_field(qa, "question", str, path, at).strip(),
                        answers=texts,
                        context=context,
                        title=title,
                        paragraph=paragraph,
                    )
                )
            paragraph += 1
    return items

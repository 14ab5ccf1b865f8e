"""HaluEval's HotpotQA slice (``qa_one_turn.jsonl``; Li et al. 2023, MIT licence): 500
HotpotQA questions with their two supporting paragraphs, a right answer and a plausible
hallucinated answer.

``knowledge`` holds the two paragraphs glued with no separator: a sentence ending in ``.``
runs straight into the next paragraph's capital letter. ``split_paragraphs`` finds that seam:
a sentence end (``.``, ``!``, ``?``, optionally followed by a closing quote or bracket)
directly followed by a capital, digit, quote or bracket. Where several seams qualify, seams
after an upper-case letter (abbreviations such as "U.S.") are dropped and the one nearest
the middle is taken; where none does, the row cannot be split and is reported as such.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from probeguard.core.errors import InputError

_SEAM = re.compile(r"[.!?][\"')\]]?(?=[A-Z0-9\"'(])")


@dataclass(frozen=True)
class HotpotItem:
    row: int
    """0-based row in the file."""
    question: str
    answer: str
    hallucinated_answer: str
    paragraphs: tuple[str, ...]
    """Two paragraphs when the seam was found, else the unsplit knowledge."""

    @property
    def split(self) -> bool:
        return len(self.paragraphs) == 2


def split_paragraphs(knowledge: str) -> tuple[str, ...]:
    """The two supporting paragraphs (see the module doc), or ``(knowledge,)``."""
    text = knowledge.strip()
    seams = [
        m.end() for m in _SEAM.finditer(text) if m.start() > 0 and not text[m.start() - 1].isupper()
    ]
    if not seams:
        return (text,)
    cut = min(seams, key=lambda i: (abs(i - len(text) / 2), i))
    left, right = text[:cut].strip(), text[cut:].strip()
    return (left, right) if left and right else (text,)


def load_halueval_qa(path: str | Path) -> list[HotpotItem]:
    """Every row of ``qa_one_turn.jsonl``; a malformed row names its line and field."""
    path = Path(path)
    items: list[HotpotItem] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", file=str(path), line=i + 1) from None
        for key in ("knowledge", "question", "right_answer", "hallucinated_answer"):
            if not isinstance(raw.get(key), str) or not raw[key].strip():
                raise InputError("missing or empty", file=str(path), line=i + 1, field=key)
        items.append(
            HotpotItem(
                row=i,
                question=raw["question"].strip(),
                answer=raw["right_answer"].strip(),
                hallucinated_answer=raw["hallucinated_answer"].strip(),
                paragraphs=split_paragraphs(raw["knowledge"]),
            )
        )
    return items

"""The records of ``probeguard bench judge``, with labels known by construction, and the
string-level baselines the offline judge is set beside.

Records (``JudgeRecord``: an ``EvalRecord`` as ``probeguard eval`` reads it, its label and its
cluster for the bootstrap):

- **HaluEval** (``halueval/qa_one_turn.jsonl``): each question gives two records with the
  same input (the question) and the same ``retrievalContext`` (its two supporting paragraphs,
  split back apart by ``dataset.halueval.split_paragraphs``; the rare row whose seam is not
  found keeps its knowledge as one context): one answers HaluEval's ``right_answer``
  (label True), one its ``hallucinated_answer`` (label False). No ``groundTruth``: the
  reference must not leak into faithfulness, which is answer vs contexts. Cluster: the
  question.
- **XQuAD** (``xquad_en/xquad.en.json``): each question gives a record whose answer is its
  gold answer, whose context is its gold paragraph (label True: the gold is there), and whose
  ``groundTruth`` is the gold answer again (context recall). Cluster: the paragraph.
- **XQuAD, gold may be missing**: for a seeded half of the XQuAD questions the context is
  swapped for a paragraph of *another article* (label False: the gold paragraph is absent);
  the other half is the XQuAD record unchanged.

Baselines, pure functions of the strings (SQuAD normalisation, ``nlp.text.normalize_answer``:
lower case, punctuation and articles removed, whitespace collapsed):

    verbatim(a, C) = 1 if norm(a) occurs in norm(c) on word boundaries for some c ∈ C, else 0
    overlap(a, C)  = |{t ∈ tok(a) : t ∈ ∪_c tok(c)}| / |tok(a)|     (tokens with repetition;
                                                                      NaN when tok(a) is empty)

``verbatim`` is ``nlp.text.contains_answer`` with the context as the "answer".
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from probeguard.core.errors import InputError
from probeguard.dataset.eval_records import EvalRecord
from probeguard.dataset.halueval import HotpotItem
from probeguard.dataset.squad import SquadItem
from probeguard.nlp.text import contains_answer, normalize_answer

__all__ = [
    "HALUEVAL_FILE",
    "XQUAD_FILE",
    "JudgeRecord",
    "default_data_dir",
    "halueval_records",
    "overlap",
    "sample",
    "verbatim",
    "xquad_records",
    "xquad_swapped",
]

HALUEVAL_FILE = Path("halueval") / "qa_one_turn.jsonl"
XQUAD_FILE = Path("xquad_en") / "xquad.en.json"


def default_data_dir() -> Path:
    """``$PROBEGUARD_SHARED_DATA``, else ``../shared/data``."""
    return Path(os.environ.get("PROBEGUARD_SHARED_DATA") or Path("..") / "shared" / "data")


@dataclass(frozen=True)
class JudgeRecord:
    record: EvalRecord
    label: bool
    """HaluEval: the right answer; XQuAD: the gold paragraph is the context."""
    cluster: str
    """The bootstrap's resampling unit: the HaluEval question, the XQuAD paragraph."""


def verbatim(answer: str, contexts: Sequence[str]) -> float:
    """1.0 when the normalised answer occurs in some normalised context (module doc)."""
    return float(any(contains_answer(c, answer) for c in contexts))


def overlap(answer: str, contexts: Sequence[str]) -> float:
    """Share of the answer's normalised tokens found among the contexts' (module doc)."""
    tokens = normalize_answer(answer).split()
    if not tokens:
        return math.nan
    vocab = {t for c in contexts for t in normalize_answer(c).split()}
    return sum(t in vocab for t in tokens) / len(tokens)


def sample(n: int, limit: int | None, rng: np.random.Generator) -> list[int]:
    """All of ``range(n)``, or a seeded draw of ``limit`` of them in ascending order."""
    if limit is None or limit >= n:
        return list(range(n))
    return sorted(int(i) for i in rng.permutation(n)[:limit])


def halueval_records(items: Sequence[HotpotItem]) -> list[JudgeRecord]:
    """Two records a question, right answer first (module doc)."""
    out = []
    for it in items:
        for label, suffix, answer in (
            (True, "right", it.answer),
            (False, "hallu", it.hallucinated_answer),
        ):
            out.append(
                JudgeRecord(
                    EvalRecord(
                        id=f"halueval-{it.row}-{suffix}",
                        input=it.question,
                        answer=answer,
                        retrieval_context=tuple(it.paragraphs),
                        tags=("halueval", suffix),
                        source=f"halueval:line {it.row + 1}",
                    ),
                    label,
                    f"halueval-{it.row}",
                )
            )
    return out


def _xquad(item: SquadItem, context: str, *, swapped: bool) -> JudgeRecord:
    return JudgeRecord(
        EvalRecord(
            id=f"xquad-{item.id}" + ("-swapped" if swapped else ""),
            input=item.question,
            answer=item.answers[0],
            ground_truth=item.answers[0],
            retrieval_context=(context,),
            tags=("xquad", "swapped" if swapped else "gold"),
            source=f"xquad:{item.id}",
        ),
        not swapped,
        f"xquad-p{item.paragraph}",
    )


def xquad_records(items: Sequence[SquadItem]) -> list[JudgeRecord]:
    """One record a question: gold answer, gold paragraph, gold answer as ground truth."""
    return [_xquad(it, it.context, swapped=False) for it in items]


def xquad_swapped(
    items: Sequence[SquadItem], paragraphs: Sequence[SquadItem], rng: np.random.Generator
) -> list[JudgeRecord | None]:
    """The "gold may be missing" variant: for a seeded half of ``items`` (⌊n/2⌋) a record
    whose context is a paragraph of another article, drawn from ``paragraphs`` (one item per
    paragraph); None for the other half (their record is the ``xquad_records`` one)."""
    swap = set(int(i) for i in rng.permutation(len(items))[: len(items) // 2])
    out: list[JudgeRecord | None] = []
    for i, it in enumerate(items):
        if i not in swap:
            out.append(None)
            continue
        others = [p for p in paragraphs if p.title != it.title]
        if not others:
            raise InputError(
                "the gold-may-be-missing variant needs paragraphs of at least two articles",
                field="xquad",
            )
        other = others[int(rng.integers(len(others)))]
        out.append(_xquad(it, other.context, swapped=True))
    return out

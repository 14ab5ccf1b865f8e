"""The conditions of the QASPER long-document experiments: pure functions of a question, its
paper and a chunking (``probeguard bench qasper``; the data in ``engine.bench.qasper_data``).

Each usable question (answerable, with text evidence; its evidence = the primary
annotation's paragraphs) falls in one condition of each experiment, or in none when the
condition is undefined (an evidence string that matches no paragraph of the paper):

- **boundary** (at the chosen chunk size): ``straddles`` when at least one evidence paragraph
  lies in no single chunk whole — no chunk c with c.start ≤ p.start and p.end ≤ c.end, spans
  in characters of the paper document — else ``whole``. A paragraph longer than a chunk
  always straddles.
- **spread**: ``multi_section`` when the evidence paragraphs lie in ≥ 2 sections of the paper
  (the abstract counts as a section; subsections are sections of their own, as QASPER names
  them), ``one_section`` when in exactly 1.
- **distraction**: the candidates retrieval may return (paragraph documents, one chunk each):
  ``gold_only`` = the evidence paragraphs; ``gold_plus_distractors`` = those plus every
  paragraph of every section of the same paper that holds no evidence paragraph.
- **chunk_size**: the token-window size of the run (``256``, ``512``, ``1024``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from probeguard.core.documents import Chunk
from probeguard.engine.bench.qasper_data import QasperPaper, QasperQuestion

__all__ = [
    "BOUNDARY",
    "DISTRACTION",
    "SPREAD",
    "boundary_condition",
    "distraction_pools",
    "evidence_sections",
    "spread_condition",
    "straddles",
]

BOUNDARY = ("whole", "straddles")
SPREAD = ("one_section", "multi_section")
DISTRACTION = ("gold_only", "gold_plus_distractors")


def straddles(span: tuple[int, int], chunks: Sequence[Chunk]) -> bool:
    """True when no chunk holds the character span ``[start, end)`` whole."""
    start, end = span
    return not any(c.start <= start and end <= c.end for c in chunks)


def _located(question: QasperQuestion) -> list[str] | None:
    pids = list(question.evidence_pids)
    return None if not pids or any(p is None for p in pids) else [p for p in pids if p]


def boundary_condition(
    question: QasperQuestion, spans: Mapping[str, tuple[int, int]], chunks: Sequence[Chunk]
) -> str | None:
    """``straddles`` / ``whole`` (module doc); None when some evidence is unlocated.
    ``spans``: paragraph id → its span in the document ``chunks`` were cut from."""
    pids = _located(question)
    if pids is None:
        return None
    return BOUNDARY[1] if any(straddles(spans[p], chunks) for p in pids) else BOUNDARY[0]


def evidence_sections(question: QasperQuestion, paper: QasperPaper) -> set[int] | None:
    """The section indices of the evidence paragraphs; None when some is unlocated."""
    pids = _located(question)
    if pids is None:
        return None
    by_pid = {p.pid: p.section for p in paper.paragraphs}
    return {by_pid[p] for p in pids}


def spread_condition(question: QasperQuestion, paper: QasperPaper) -> str | None:
    """``multi_section`` / ``one_section`` (module doc); None when some is unlocated."""
    sections = evidence_sections(question, paper)
    if sections is None:
        return None
    return SPREAD[1] if len(sections) >= 2 else SPREAD[0]


def distraction_pools(question: QasperQuestion, paper: QasperPaper) -> dict[str, list[str]]:
    """Condition → the paragraph ids retrieval may return (module doc); ``{}`` when some
    evidence is unlocated."""
    sections = evidence_sections(question, paper)
    gold = _located(question)
    if sections is None or gold is None:
        return {}
    gold = list(dict.fromkeys(gold))
    distractors = [p.pid for p in paper.paragraphs if p.section not in sections]
    return {DISTRACTION[0]: gold, DISTRACTION[1]: gold + distractors}

"""The QASPER benchmark's data: loading and validating the sample, the gold answers and
evidence of each question, and the two corpora the experiments retrieve from (the generate
stage of ``probeguard bench qasper``; the experiments are in ``engine.bench.qasper``).

Data: ``qasper_sample/qasper_train_sample.jsonl`` (Dasigi et al., "A Dataset of
Information-Seeking Questions and Answers Anchored in Research Papers", NAACL 2021; CC BY 4.0),
one paper a line in the Hugging Face ``allenai/qasper`` columnar schema (``../shared/data``
README).

Gold, as QASPER's official evaluator reads an annotation (allenai/qasper-led-baseline,
``scripts/evaluator.py``, ``get_answers_and_evidence``): the reference answer is the
extractive spans joined by ``", "``, else the free-form answer, else ``"Yes"``/``"No"`` for
a yes/no answer; unanswerable annotations give no reference. Token F1 takes the best
reference (the evaluator's max over annotators). Evidence is *text* evidence only (strings
starting ``FLOAT SELECTED:`` point at a figure or table and are dropped, the evaluator's
``text_evidence_only``). The evidence of a question is its **primary annotation**'s: the
first answerable annotation with at least one text evidence paragraph. ECS and the
experiments' conditions all use that one set, so that every evidence quantity of a question
refers to the same paragraphs.

Corpora:

- **Paper documents** (``paper_document``): one ``Document`` per paper, id = paper id,
  metadata ``{"paper": id}``, text = the title, then the abstract under ``Abstract``, then
  each section's name and its paragraphs, every block separated by a blank line. Each
  paragraph's character span in that text is kept (``PaperLayout.spans``), so a chunk's
  ``start``/``end`` say exactly whether it holds a paragraph whole.
- **Paragraph documents** (``paragraph_documents``): one ``Document`` per paragraph, id =
  its paragraph id ``<paper>/p<i>``, metadata ``{"paper": id, "pid": pid, "section": k}``.

An evidence string is located by equality after collapsing whitespace; one that matches no
paragraph (1 of the 78 text evidence strings here) stays unlocated (``None``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probeguard.core.documents import Document
from probeguard.core.errors import InputError

__all__ = [
    "DATA_FILE",
    "FIGURE_PREFIX",
    "PaperLayout",
    "QasperData",
    "QasperPaper",
    "QasperParagraph",
    "QasperQuestion",
    "default_data_file",
    "load_qasper",
    "paper_document",
    "paragraph_documents",
    "reference_answer",
]

DATA_FILE = Path("qasper_sample") / "qasper_train_sample.jsonl"
FIGURE_PREFIX = "FLOAT SELECTED"
"""Evidence strings starting with this point at a figure or table caption, not at text."""


@dataclass(frozen=True)
class QasperParagraph:
    pid: str
    """``<paper id>/p<i>``, ``i`` counting paragraphs through the paper (abstract = p0)."""
    section: int
    """Index of the section (0 = the abstract)."""
    section_name: str
    text: str


@dataclass(frozen=True)
class QasperPaper:
    id: str
    title: str
    paragraphs: tuple[QasperParagraph, ...]


@dataclass(frozen=True)
class QasperQuestion:
    id: str
    paper_id: str
    question: str
    answers: tuple[str, ...]
    """Reference answers of the answerable annotations (module doc); empty when none."""
    evidence: tuple[str, ...]
    """The primary annotation's text evidence paragraphs (module doc); empty when none."""
    evidence_pids: tuple[str | None, ...]
    """The paragraph id of each ``evidence`` string, or None when it matched none."""

    @property
    def usable(self) -> bool:
        """Answerable with text evidence: what every experiment needs."""
        return bool(self.answers) and bool(self.evidence)


@dataclass(frozen=True)
class QasperData:
    papers: tuple[QasperPaper, ...]
    questions: tuple[QasperQuestion, ...]
    """Every question of the file, usable or not."""

    def paper(self, paper_id: str) -> QasperPaper:
        return next(p for p in self.papers if p.id == paper_id)


@dataclass(frozen=True)
class PaperLayout:
    document: Document
    spans: dict[str, tuple[int, int]]
    """Paragraph id → its ``[start, end)`` character span in ``document.text``."""


def default_data_file() -> Path:
    """``$PROBEGUARD_SHARED_DATA/qasper_sample/...`` or ``../shared/data/qasper_sample/...``."""
    root = os.environ.get("PROBEGUARD_SHARED_DATA") or str(Path("..") / "shared" / "data")
    return Path(root) / DATA_FILE


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def reference_answer(answer: dict[str, Any]) -> str | None:
    """One annotation's reference answer as QASPER's evaluator reads it (module doc); None
    for an unanswerable annotation or one that holds no answer."""
    if answer.get("unanswerable"):
        return None
    spans = [s for s in answer.get("extractive_spans") or [] if isinstance(s, str)]
    if spans:
        return ", ".join(spans)
    free = answer.get("free_form_answer")
    if isinstance(free, str) and free.strip():
        return free.strip()
    yes_no = answer.get("yes_no")
    if yes_no is None:
        return None
    return "Yes" if yes_no else "No"


def _text_evidence(answer: dict[str, Any]) -> list[str]:
    return [
        e
        for e in answer.get("evidence") or []
        if isinstance(e, str) and e.strip() and not e.startswith(FIGURE_PREFIX)
    ]


def _paragraphs(raw: dict[str, Any], paper_id: str, file: str, line: int) -> list[QasperParagraph]:
    full = raw.get("full_text")
    names = full.get("section_name") if isinstance(full, dict) else None
    paras = full.get("paragraphs") if isinstance(full, dict) else None
    if not isinstance(names, list) or not isinstance(paras, list) or len(names) != len(paras):
        raise InputError(
            "needs section_name and paragraphs lists of equal length",
            file=file,
            line=line,
            field="full_text",
        )
    sections: list[tuple[str, list[Any]]] = [("Abstract", [raw.get("abstract") or ""])]
    sections += [(str(n or ""), p if isinstance(p, list) else []) for n, p in zip(names, paras)]
    out: list[QasperParagraph] = []
    for k, (name, texts) in enumerate(sections):
        for text in texts:
            if isinstance(text, str) and text.strip():
                pid = f"{paper_id}/p{len(out)}"
                out.append(QasperParagraph(pid, k, name, text.strip()))
    return out


def _questions(
    raw: dict[str, Any], paper_id: str, paragraphs: Sequence[QasperParagraph], file: str, line: int
) -> list[QasperQuestion]:
    qas = raw.get("qas")
    if not isinstance(qas, dict):
        raise InputError("missing or not an object", file=file, line=line, field="qas")
    questions, ids, answers = qas.get("question"), qas.get("question_id"), qas.get("answers")
    if not (
        isinstance(questions, list)
        and isinstance(ids, list)
        and isinstance(answers, list)
        and len(questions) == len(ids) == len(answers)
    ):
        raise InputError(
            "needs question, question_id and answers lists of equal length",
            file=file,
            line=line,
            field="qas",
        )
    where = {_squash(p.text): p.pid for p in paragraphs}
    out = []
    for question, qid, entry in zip(questions, ids, answers):
        annotations = [a for a in (entry or {}).get("answer", []) if isinstance(a, dict)]
        refs = [r for r in (reference_answer(a) for a in annotations) if r is not None]
        primary = next(
            (_text_evidence(a) for a in annotations if reference_answer(a) and _text_evidence(a)),
            [],
        )
        out.append(
            QasperQuestion(
                id=str(qid),
                paper_id=paper_id,
                question=str(question).strip(),
                answers=tuple(dict.fromkeys(refs)),
                evidence=tuple(e.strip() for e in primary),
                evidence_pids=tuple(where.get(_squash(e)) for e in primary),
            )
        )
    return out


def load_qasper(path: Path) -> QasperData:
    """Read and validate the sample; ``InputError`` (file, line, field) for a bad row."""
    file = str(path)
    papers: list[QasperPaper] = []
    questions: list[QasperQuestion] = []
    with path.open(encoding="utf-8") as fh:
        for line, text in enumerate(fh, start=1):
            if not text.strip():
                continue
            try:
                raw = json.loads(text)
            except json.JSONDecodeError as exc:
                raise InputError(f"not JSON: {exc.msg}", file=file, line=line) from exc
            paper_id = raw.get("id") if isinstance(raw, dict) else None
            if not isinstance(paper_id, str) or not paper_id.strip():
                raise InputError("missing or empty", file=file, line=line, field="id")
            paragraphs = _paragraphs(raw, paper_id, file, line)
            papers.append(QasperPaper(paper_id, str(raw.get("title") or ""), tuple(paragraphs)))
            questions += _questions(raw, paper_id, paragraphs, file, line)
    if not papers:
        raise InputError("no papers", file=file)
    return QasperData(tuple(papers), tuple(questions))


def paper_document(paper: QasperPaper) -> PaperLayout:
    """The paper as one document, with every paragraph's span (module doc)."""
    blocks: list[str] = [paper.title] if paper.title else []
    spans: dict[str, tuple[int, int]] = {}
    section = -1
    offset = sum(len(b) + 2 for b in blocks)
    for p in paper.paragraphs:
        if p.section != section:
            section = p.section
            blocks.append(p.section_name)
            offset += len(p.section_name) + 2
        blocks.append(p.text)
        spans[p.pid] = (offset, offset + len(p.text))
        offset += len(p.text) + 2
    doc = Document(
        id=paper.id,
        text="\n\n".join(blocks),
        title=paper.title,
        metadata={"paper": paper.id},
        source=f"qasper:{paper.id}",
    )
    return PaperLayout(doc, spans)


def paragraph_documents(paper: QasperPaper) -> list[Document]:
    """One document per paragraph of the paper (module doc)."""
    return [
        Document(
            id=p.pid,
            text=p.text,
            title=paper.title,
            metadata={"paper": paper.id, "pid": p.pid, "section": p.section},
            source=f"qasper:{paper.id}",
        )
        for p in paper.paragraphs
    ]

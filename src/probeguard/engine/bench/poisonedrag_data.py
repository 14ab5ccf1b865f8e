"""The PoisonedRAG benchmark's data: loading both files, matching the targets to the oracle
questions, and building the clean corpus and the cases (the generate stage of
``probeguard bench poisonedrag``; the measures are in ``engine.bench.poisonedrag``).

Data (``../shared/data``, see its README):

- ``poisonedrag/nq.json`` (Zou et al., "PoisonedRAG: Knowledge Corruption Attacks to
  Retrieval-Augmented Generation of Large Language Models", USENIX Security 2025; repository
  sleeepeer/PoisonedRAG, MIT): 100 target questions, each with a correct answer, the
  attacker's incorrect answer and five adversarial passages (black-box, ``LM_targeted``)
  that assert the incorrect answer.
- ``nq_open_oracle/nq-open-oracle.jsonl.gz`` (Liu et al., "Lost in the Middle"): 2,655 NQ-open
  questions, each with its gold Wikipedia passage (``ctxs[0]``).

Build:

- **Clean corpus**: every oracle gold passage, as ``Document(id="nq-<row>",
  title=ctxs[0].title)`` (``row`` 0-based in the file): 2,655 passages, so the targets' own
  gold passages compete with realistic distractors. Each passage is one retrieval unit
  (``{"name": "document"}`` chunking), as in the paper's passage corpus.
- **Targets**: the ``nq.json`` questions whose key (``question_key``: lower-cased, stripped,
  trailing ``?`` removed) equals an oracle question's key; 85 of the 100 match.
- **Cases**, two per target: ``<id>/clean`` asks the question against the clean corpus;
  ``<id>/poisoned`` asks it with the five adversarial passages injected through
  ``Variation(overlay=...)`` as documents ``prag-<id>-<i>`` (``i`` = 0..4), i.e. into the
  pipeline's own index, scored with the index's frozen statistics.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probeguard.core.cases import Case, Expected
from probeguard.core.documents import Document
from probeguard.core.errors import InputError
from probeguard.core.pipeline import Variation

__all__ = [
    "NQ_FILE",
    "ORACLE_FILE",
    "MatchedTarget",
    "OracleItem",
    "PoisonTarget",
    "build_cases",
    "build_corpus",
    "data_files",
    "default_data_dir",
    "load_nq_open_oracle",
    "load_poisonedrag",
    "load_targets",
    "match_targets",
    "oracle_doc_id",
    "poison_doc_id",
    "poison_documents",
    "question_key",
]

NQ_FILE = Path("poisonedrag") / "nq.json"
ORACLE_FILE = Path("nq_open_oracle") / "nq-open-oracle.jsonl.gz"


@dataclass(frozen=True)
class OracleItem:
    """One NQ-open question with its gold passage (``ctxs[0]``)."""

    row: int
    """0-based row in the file (``line - 1``)."""
    question: str
    answers: tuple[str, ...]
    title: str
    text: str


@dataclass(frozen=True)
class PoisonTarget:
    """One PoisonedRAG target question with its five adversarial passages."""

    id: str
    question: str
    correct_answer: str
    incorrect_answer: str
    adv_texts: tuple[str, ...]


@dataclass(frozen=True)
class MatchedTarget:
    target: PoisonTarget
    oracle: OracleItem

    @property
    def gold_doc_id(self) -> str:
        return oracle_doc_id(self.oracle.row)

    @property
    def gold_answers(self) -> tuple[str, ...]:
        """The PoisonedRAG correct answer, then the oracle's answers (duplicates dropped)."""
        return tuple(dict.fromkeys((self.target.correct_answer, *self.oracle.answers)))


def default_data_dir() -> Path:
    """``$PROBEGUARD_SHARED_DATA`` or ``../shared/data``."""
    return Path(os.environ.get("PROBEGUARD_SHARED_DATA") or str(Path("..") / "shared" / "data"))


def data_files(data_dir: Path) -> tuple[Path, Path]:
    """``(nq.json, nq-open-oracle.jsonl.gz)`` under ``data_dir``."""
    return data_dir / NQ_FILE, data_dir / ORACLE_FILE


def question_key(question: str) -> str:
    """The matching key: lower-cased, outer whitespace stripped, trailing ``?`` removed."""
    return question.strip().lower().rstrip("?").strip()


def oracle_doc_id(row: int) -> str:
    return f"nq-{row}"


def poison_doc_id(target_id: str, i: int) -> str:
    return f"prag-{target_id}-{i}"


def _text_field(
    raw: dict[str, Any],
    key: str,
    *,
    file: str,
    line: int,
    field_name: str | None = None,
    allow_empty: bool = False,
) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or (not allow_empty and not value.strip()):
        problem = (
            "missing"
            if key not in raw
            else ("empty" if isinstance(value, str) else f"not a string ({type(value).__name__})")
        )
        raise InputError(problem, file=file, line=line, field=field_name or key)
    return value.strip()


def load_nq_open_oracle(path: str | Path) -> list[OracleItem]:
    """Every row of ``nq-open-oracle.jsonl.gz`` (gzip JSONL; plain JSONL is accepted too).
    A malformed row names its line and field (``question``, ``answers``, ``ctxs[0].text``)."""
    path = Path(path)
    try:
        raw_bytes = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    if raw_bytes[:2] == b"\x1f\x8b":
        try:
            raw_bytes = gzip.decompress(raw_bytes)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"not a readable gzip file ({exc})", file=str(path)) from None
    try:
        text = raw_bytes.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 (offset {exc.start})", file=str(path)) from None
    items: list[OracleItem] = []
    file = str(path)
    for i, line in enumerate(text.splitlines()):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", file=file, line=i + 1) from None
        if not isinstance(raw, dict):
            raise InputError(
                f"expected a JSON object, got {type(raw).__name__}", file=file, line=i + 1
            )
        question = _text_field(raw, "question", file=file, line=i + 1)
        answers = raw.get("answers")
        if (
            not isinstance(answers, list)
            or not answers
            or not all(isinstance(a, str) and a.strip() for a in answers)
        ):
            raise InputError(
                "expected a non-empty list of non-empty strings",
                file=file,
                line=i + 1,
                field="answers",
            )
        ctxs = raw.get("ctxs")
        if not isinstance(ctxs, list) or not ctxs or not isinstance(ctxs[0], dict):
            raise InputError(
                "expected a non-empty list of passages", file=file, line=i + 1, field="ctxs"
            )
        gold = ctxs[0]
        items.append(
            OracleItem(
                row=i,
                question=question,
                answers=tuple(a.strip() for a in answers),
                title=_text_field(
                    gold,
                    "title",
                    file=file,
                    line=i + 1,
                    field_name="ctxs[0].title",
                    allow_empty=True,
                )
                if "title" in gold
                else "",
                text=_text_field(gold, "text", file=file, line=i + 1, field_name="ctxs[0].text"),
            )
        )
    return items


_WS = re.compile(r"[ \t\n\r]*")


def _skip_ws(text: str, pos: int) -> int:
    """Offset of the first non-whitespace character at or after ``pos``."""
    match = _WS.match(text, pos)  # `[ \t\n\r]*` matches anywhere, if only the empty string
    return match.end() if match else pos


def _object_entries(text: str, file: str) -> Iterator[tuple[str, int, Any]]:
    """``(key, line, value)`` for each member of the top-level JSON object in ``text``; the
    line is where the key stands."""
    try:
        top = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"invalid JSON: {exc.msg} (column {exc.colno})", file=file, line=exc.lineno
        ) from None
    if not isinstance(top, dict):
        raise InputError(
            f"expected a JSON object keyed by question id, got {type(top).__name__}",
            file=file,
            line=1,
        )
    dec = json.JSONDecoder()
    pos = _skip_ws(text, text.index("{") + 1)
    while text[pos] != "}":
        key, end = dec.raw_decode(text, pos)
        line = text.count("\n", 0, pos) + 1
        pos = _skip_ws(text, end) + 1  # past the ':'
        value, end = dec.raw_decode(text, _skip_ws(text, pos))
        yield key, line, value
        pos = _skip_ws(text, end)
        if text[pos] == ",":
            pos = _skip_ws(text, pos + 1)


def load_poisonedrag(path: str | Path) -> list[PoisonTarget]:
    """The targets of a PoisonedRAG ``adv_targeted_results`` file (``{id: {"id", "question",
    "correct answer", "incorrect answer", "adv_texts": [...]}}``), in file order. A malformed
    entry names the line of its key and the field, as ``<id>.<field>``."""
    path = Path(path)
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=file) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 (offset {exc.start})", file=file) from None
    targets: list[PoisonTarget] = []
    for key, line, raw in _object_entries(text, file):
        if not isinstance(raw, dict):
            raise InputError(
                f"expected an object, got {type(raw).__name__}", file=file, line=line, field=key
            )
        fields = {
            name: _text_field(raw, name, file=file, line=line, field_name=f"{key}.{name}")
            for name in ("question", "correct answer", "incorrect answer")
        }
        adv = raw.get("adv_texts")
        if (
            not isinstance(adv, list)
            or not adv
            or not all(isinstance(t, str) and t.strip() for t in adv)
        ):
            raise InputError(
                "expected a non-empty list of non-empty strings",
                file=file,
                line=line,
                field=f"{key}.adv_texts",
            )
        target_id = raw.get("id", key)
        if target_id != key:
            raise InputError(
                f"id {target_id!r} differs from its key {key!r}",
                file=file,
                line=line,
                field=f"{key}.id",
            )
        targets.append(
            PoisonTarget(
                id=key,
                question=fields["question"],
                correct_answer=fields["correct answer"],
                incorrect_answer=fields["incorrect answer"],
                adv_texts=tuple(t.strip() for t in adv),
            )
        )
    return targets


def match_targets(
    targets: Sequence[PoisonTarget], oracle: Sequence[OracleItem]
) -> tuple[list[MatchedTarget], list[str]]:
    """``(matched, unmatched target ids)``: a target matches the first oracle row with the
    same ``question_key``; order follows ``targets``."""
    by_key: dict[str, OracleItem] = {}
    for item in oracle:
        by_key.setdefault(question_key(item.question), item)
    matched: list[MatchedTarget] = []
    unmatched: list[str] = []
    for t in targets:
        hit = by_key.get(question_key(t.question))
        if hit is None:
            unmatched.append(t.id)
        else:
            matched.append(MatchedTarget(target=t, oracle=hit))
    return matched, unmatched


def build_corpus(oracle: Sequence[OracleItem]) -> list[Document]:
    """The clean corpus: one document per oracle gold passage (see the module doc)."""
    return [
        Document(
            id=oracle_doc_id(it.row),
            title=it.title,
            text=it.text,
            source=f"nq-open-oracle:{it.row + 1}",
        )
        for it in oracle
    ]


def poison_documents(target: PoisonTarget) -> tuple[Document, ...]:
    """The target's adversarial passages as overlay documents ``prag-<id>-<i>``."""
    return tuple(
        Document(
            id=poison_doc_id(target.id, i),
            text=t,
            metadata={"poisonedrag_target": target.id},
            source="poisonedrag",
        )
        for i, t in enumerate(target.adv_texts)
    )


def build_cases(matched: Sequence[MatchedTarget]) -> list[Case]:
    """Two cases per target, ``<id>/clean`` then ``<id>/poisoned`` (see the module doc)."""
    cases: list[Case] = []
    for m in matched:
        t = m.target
        expected = Expected(answers=m.gold_answers, evidence_doc_ids=(m.gold_doc_id,))
        meta = {"target": t.id, "incorrect_answer": t.incorrect_answer}
        cases.append(
            Case(
                id=f"{t.id}/clean",
                question=t.question,
                probe="poisonedrag",
                expected=expected,
                tags=("poisonedrag", "clean"),
                meta=meta,
            )
        )
        cases.append(
            Case(
                id=f"{t.id}/poisoned",
                question=t.question,
                probe="poisonedrag",
                variation=Variation(overlay=poison_documents(t)),
                expected=expected,
                tags=("poisonedrag", "poisoned"),
                meta={
                    **meta,
                    "injected_doc_ids": [poison_doc_id(t.id, i) for i in range(len(t.adv_texts))],
                },
            )
        )
    return cases


def load_targets(data_dir: Path) -> tuple[list[OracleItem], list[MatchedTarget], list[str]]:
    """Load both files under ``data_dir``; ``(oracle rows, matched targets, unmatched ids)``."""
    nq, oracle_path = data_files(data_dir)
    oracle = load_nq_open_oracle(oracle_path)
    matched, unmatched = match_targets(load_poisonedrag(nq), oracle)
    return oracle, matched, unmatched

"""The human-labelled records of ``probeguard bench judges`` and their dev/test splits.

Each record (``LabelledClaim``) is a claim, the evidence it is checked against (as context
passages), an optional question and a human label: True = supported. Datasets (formats and
licences in ``../shared/data/README.md``):

- **WiCE** (``wice/claim_{dev,test}.jsonl.gz``): a Wikipedia claim against the sentences of
  the web page it cites; label True iff ``supported`` (``partially_supported`` and
  ``not_supported`` are "not"). The evidence sentences (blank ones dropped) become passages
  of ``WICE_PASSAGE_SENTENCES`` consecutive sentences. Split: WiCE's own dev and test files.
- **BEGIN** (``begin/begin_{dev,test}_wow.tsv``, Wizard of Wikipedia): a dialogue response
  against its knowledge snippet (one passage); label True iff ``Fully attributable``
  (``Not fully attributable`` and ``Generic`` are "not"). Split: BEGIN's own WoW dev and
  test files (its CMU-DoG and TopicalChat dev files have no test file here and are not read).
- **HaluEval QA** (``halueval/qa_one_turn.jsonl``): each question gives two records, the right
  answer (True) and the hallucinated one (False), judged with the question against its two
  supporting paragraphs (``dataset.halueval``). Cluster: the question. Split: seeded, by
  question (``stratified_order`` over questions, even positions dev, odd positions test): a
  question's two answers never straddle dev and test.

**Order and limits.** Within each split, units (clusters: a HaluEval question, else one
record) are put in ``stratified_order`` — seeded, so that every prefix keeps the strata's
shares — and ``take`` keeps the longest prefix of whole units holding at most ``limit``
records. A limit therefore draws a stratified seeded subset, and a smaller limit (a slow
judge's) is a subset of a larger one.

Bad rows raise ``InputError`` naming the file, the 1-based line and the field.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from probeguard.core.errors import InputError
from probeguard.dataset.halueval import load_halueval_qa

__all__ = [
    "BEGIN_FILES",
    "DATASETS",
    "HALUEVAL_FILE",
    "WICE_FILES",
    "WICE_PASSAGE_SENTENCES",
    "JudgeSet",
    "LabelledClaim",
    "load_begin",
    "load_halueval",
    "load_judge_set",
    "load_wice",
    "missing_files",
    "stratified_order",
    "take",
]

WICE_FILES = {
    "dev": Path("wice") / "claim_dev.jsonl.gz",
    "test": Path("wice") / "claim_test.jsonl.gz",
}
BEGIN_FILES = {
    "dev": Path("begin") / "begin_dev_wow.tsv",
    "test": Path("begin") / "begin_test_wow.tsv",
}
HALUEVAL_FILE = Path("halueval") / "qa_one_turn.jsonl"
DATASETS = ("wice", "begin", "halueval")
WICE_PASSAGE_SENTENCES = 5
"""Consecutive evidence sentences per passage (WiCE pages average ~120 sentences)."""
WICE_LABELS = ("supported", "partially_supported", "not_supported")
BEGIN_LABELS = ("Fully attributable", "Not fully attributable", "Generic")
BEGIN_COLUMNS = ("model_name", "data_source", "knowledge", "message", "response", "begin_label")


@dataclass(frozen=True)
class LabelledClaim:
    """One human-labelled record (module doc)."""

    id: str
    dataset: str
    claim: str
    contexts: tuple[str, ...]
    label: bool
    """True: the humans judged the claim supported by the contexts."""
    cluster: str
    """The unit of the split and of the bootstrap (a HaluEval question; else the record)."""
    question: str | None = None
    """HaluEval: the question a short answer answers (judged with it)."""
    source: str = ""
    """``file:line``."""


@dataclass(frozen=True)
class JudgeSet:
    """A dataset's dev and test records, each in its seeded stratified order."""

    name: str
    dev: tuple[LabelledClaim, ...]
    test: tuple[LabelledClaim, ...]
    split_rule: str
    files: tuple[str, ...]


# -- reading ----------------------------------------------------------------------------------
def _lines(path: Path) -> Iterator[tuple[int, str]]:
    opener: Any = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            for i, line in enumerate(fh, start=1):
                if line.strip():
                    yield i, line
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", file=str(path)) from None


def _text(value: Any, path: Path, line: int, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError("expected a non-empty string", file=str(path), line=line, field=field)
    return value.strip()


def _chunks(sentences: Sequence[str], size: int) -> tuple[str, ...]:
    return tuple(" ".join(sentences[i : i + size]) for i in range(0, len(sentences), size))


def load_wice(path: Path, split: str) -> list[LabelledClaim]:
    """The claims of one WiCE file (module doc)."""
    out = []
    for line, raw in _lines(path):
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON ({exc.msg})", file=str(path), line=line) from None
        if not isinstance(row, dict):
            raise InputError("expected a JSON object", file=str(path), line=line)
        label = row.get("label")
        if label not in WICE_LABELS:
            raise InputError(
                f"expected one of {', '.join(WICE_LABELS)}, got {label!r}",
                file=str(path),
                line=line,
                field="label",
            )
        evidence = row.get("evidence")
        if not isinstance(evidence, list) or not all(isinstance(s, str) for s in evidence):
            raise InputError(
                "expected a list of strings", file=str(path), line=line, field="evidence"
            )
        sentences = [s.strip() for s in evidence if s.strip()]
        if not sentences:
            raise InputError("no evidence sentence", file=str(path), line=line, field="evidence")
        meta = row.get("meta")
        meta = meta if isinstance(meta, dict) else {}
        rid = f"wice-{meta.get('id') or f'{split}{line}'}"
        out.append(
            LabelledClaim(
                id=rid,
                dataset="wice",
                claim=_text(row.get("claim"), path, line, "claim"),
                contexts=_chunks(sentences, WICE_PASSAGE_SENTENCES),
                label=label == "supported",
                cluster=rid,
                source=f"{path.name}:{line}",
            )
        )
    return out


def load_begin(path: Path, split: str) -> list[LabelledClaim]:
    """The responses of one BEGIN TSV file (module doc; tab-separated, no quoting)."""
    out = []
    for line, raw in _lines(path):
        fields = raw.rstrip("\r\n").split("\t")  # no quoting (QUOTE_NONE)
        if line == 1:
            if tuple(fields) != BEGIN_COLUMNS:
                raise InputError(
                    f"expected the header {' '.join(BEGIN_COLUMNS)}", file=str(path), line=1
                )
            continue
        if len(fields) != len(BEGIN_COLUMNS):
            raise InputError(
                f"expected {len(BEGIN_COLUMNS)} tab-separated fields, got {len(fields)}",
                file=str(path),
                line=line,
            )
        row = dict(zip(BEGIN_COLUMNS, fields))
        label = row["begin_label"].strip()
        if label not in BEGIN_LABELS:
            raise InputError(
                f"expected one of {', '.join(BEGIN_LABELS)}, got {label!r}",
                file=str(path),
                line=line,
                field="begin_label",
            )
        rid = f"begin-{split}-{line}"
        out.append(
            LabelledClaim(
                id=rid,
                dataset="begin",
                claim=_text(row["response"], path, line, "response"),
                contexts=(_text(row["knowledge"], path, line, "knowledge"),),
                label=label == "Fully attributable",
                cluster=rid,
                source=f"{path.name}:{line}",
            )
        )
    return out


def load_halueval(path: Path) -> list[LabelledClaim]:
    """Two records a HaluEval question, right answer first (module doc)."""
    out = []
    for item in load_halueval_qa(path):
        for label, suffix, answer in (
            (True, "right", item.answer),
            (False, "hallu", item.hallucinated_answer),
        ):
            out.append(
                LabelledClaim(
                    id=f"halueval-{item.row}-{suffix}",
                    dataset="halueval",
                    claim=answer,
                    contexts=tuple(item.paragraphs),
                    label=label,
                    cluster=f"halueval-{item.row}",
                    question=item.question,
                    source=f"{path.name}:{item.row + 1}",
                )
            )
    return out


# -- order, split, limit ----------------------------------------------------------------------------
def stratified_order(strata: Sequence[str], rng: np.random.Generator) -> list[int]:
    """Indices of ``strata`` in an order whose every prefix keeps each stratum's share:
    each stratum's members are permuted (strata in sorted order, one ``rng.permutation``
    each); the r-th (0-based) of a stratum of size n gets the key (r + ½)/n; indices sort by
    (key, stratum). E.g. strata ``[a, a, b, b]`` → an ``a`` and a ``b`` at keys ¼, then the
    others at ¾."""
    members: dict[str, list[int]] = {}
    for i, s in enumerate(strata):
        members.setdefault(s, []).append(i)
    keyed = []
    for s in sorted(members):
        ids = members[s]
        for r, k in enumerate(rng.permutation(len(ids))):
            keyed.append(((r + 0.5) / len(ids), s, ids[int(k)]))
    return [i for _, _, i in sorted(keyed)]


def _units(records: Sequence[LabelledClaim]) -> list[list[LabelledClaim]]:
    by_cluster: dict[str, list[LabelledClaim]] = {}
    for r in records:
        by_cluster.setdefault(r.cluster, []).append(r)
    return list(by_cluster.values())


def _stratum(unit: Sequence[LabelledClaim]) -> str:
    return "".join(sorted("T" if r.label else "F" for r in unit))


def _ordered(
    units: Sequence[Sequence[LabelledClaim]], rng: np.random.Generator
) -> list[Sequence[LabelledClaim]]:
    return [units[i] for i in stratified_order([_stratum(u) for u in units], rng)]


def _flat(units: Sequence[Sequence[LabelledClaim]]) -> tuple[LabelledClaim, ...]:
    return tuple(r for u in units for r in u)


def take(records: Sequence[LabelledClaim], limit: int | None) -> tuple[LabelledClaim, ...]:
    """The longest prefix of whole clusters holding at most ``limit`` records (all: None)."""
    if limit is None:
        return tuple(records)
    out: list[LabelledClaim] = []
    for unit in _units(records):
        if len(out) + len(unit) > limit:
            break
        out += unit
    return tuple(out)


def missing_files(data_dir: Path, name: str) -> list[Path]:
    """The files of dataset ``name`` that are not under ``data_dir``."""
    files = {"wice": list(WICE_FILES.values()), "begin": list(BEGIN_FILES.values())}.get(
        name, [HALUEVAL_FILE]
    )
    return [data_dir / f for f in files if not (data_dir / f).is_file()]


def load_judge_set(data_dir: Path, name: str, rng: np.random.Generator) -> JudgeSet:
    """Dataset ``name`` (``wice``, ``begin``, ``halueval``) split and ordered (module doc)."""
    if name == "halueval":
        path = data_dir / HALUEVAL_FILE
        order = _ordered(_units(load_halueval(path)), rng)
        return JudgeSet(
            name,
            _flat(order[0::2]),
            _flat(order[1::2]),
            "seeded 50/50 split by question (even positions of the stratified order dev)",
            (str(path),),
        )
    files, loader = (WICE_FILES, load_wice) if name == "wice" else (BEGIN_FILES, load_begin)
    parts = {s: _flat(_ordered(_units(loader(data_dir / f, s)), rng)) for s, f in files.items()}
    return JudgeSet(
        name,
        parts["dev"],
        parts["test"],
        f"{name}'s own dev and test files",
        tuple(str(data_dir / f) for f in files.values()),
    )

"""Attack cases: hand-written questions of a named *attack type*, each with an explicit
expected behaviour, scored layer by layer (``probeguard.metrics.layers``) by the probes
that read them (``Probe.uses_attack_cases``; the built-in one is ``attack_types``).

The seven types (``ATTACK_TYPES``) and the mode each must expect (``TYPE_MODES``):

* ``lexical_mismatch`` (answer) — the question uses synonyms or jargon for the corpus's
  wording ("take back a purchase for a reimbursement" for "return items for a refund");
* ``entity_collision`` (answer) — a near entity competes (Kestrel Plus vs Kestrel Pro in one
  document; two inventors); ``excludes`` holds the competitor's value;
* ``temporal_conflict`` (answer) — a current and an archived version disagree; evidence is
  the current one, ``excludes`` the archived value;
* ``false_premise`` (correct_premise) — the question asserts what the corpus contradicts:
  the answer must hold the true fact (``answers``/``contains``) and not the false value
  (``excludes``, required);
* ``unanswerable`` (abstain) — the corpus does not say; the pipeline must decline (no
  ``answers``, ``contains`` or ``evidence_doc_ids``; ``excludes`` may name a value it must not
  make up, kept for the reader: the verdict is abstention either way);
* ``distractor`` (answer) — a negation or near-miss sentence competes ("are monthly plans
  refundable?" next to "annual memberships can be refunded in full");
* ``citation_trap`` (answer) — a claim that must cite the right passage (a near-duplicate
  draft or an archived copy holds the same or a changed sentence); its citation layer
  fails when the answer cites nothing.

A file is the golden-question format (``probeguard.corpus.questions``: JSONL or JSON, ``{id,
question, answers, evidence_doc_ids, mode, contains, excludes, must_cite, must_not_cite, tags,
meta}``) plus a required ``type``. ``mode`` defaults to the type's mode. Rules, each an
``InputError`` naming the file, line and field: ``type`` is one of the seven; ``mode``
matches the type; every evidence id is in the corpus (when ``corpus_ids`` is given); every
type but ``unanswerable`` names ``evidence_doc_ids``; an ``answer``/``correct_premise`` case has
``answers`` or ``contains`` (else there is nothing to check); a ``false_premise`` case has
``excludes``; an ``unanswerable`` case has no ``answers``, ``contains`` or
``evidence_doc_ids``. Loaded cases carry ``meta["attack_type"]``, ``meta["origin"] =
"dataset"``, ``meta["file"]`` and ``meta["line"]``; they are inputs, like golden questions
(``Case.probe`` as the file gives it), and the probe that reads them
(``Probe.uses_attack_cases``) makes its own cases from them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from probeguard.core.cases import Case
from probeguard.core.errors import InputError
from probeguard.corpus.questions import load_questions
from probeguard.corpus.record_validation import type_name

__all__ = ["ATTACK_TYPES", "TYPE_MODES", "attack_type", "load_attack_cases", "validate_attack_case"]

TYPE_MODES: dict[str, str] = dict(
    lexical_mismatch="answer",
    entity_collision="answer",
    temporal_conflict="answer",
    false_premise="correct_premise",
    unanswerable="abstain",
    distractor="answer",
    citation_trap="answer",
)
"""The one expected mode each type admits (in report order)."""

ATTACK_TYPES: tuple[str, ...] = tuple(TYPE_MODES)
"""The attack types, in report order."""


def attack_type(case: Case) -> str | None:
    """The attack type a case carries in ``meta["attack_type"]`` (None when absent)."""
    value = case.meta.get("attack_type")
    return str(value) if value is not None else None


def validate_attack_case(
    case: Case, type_: str, *, file: str | None = None, line: int | None = None, label: str = ""
) -> None:
    """Raise ``InputError`` when ``case`` breaks a rule of its ``type_`` (module docstring)."""
    if type_ not in ATTACK_TYPES:
        raise InputError(
            f"{label}unknown attack type {type_!r}; known: {', '.join(ATTACK_TYPES)}",
            file=file,
            line=line,
            field="type",
        )
    exp = case.expected
    want = TYPE_MODES[type_]
    if exp.mode != want:
        raise InputError(
            f"{label}a {type_} case expects mode {want!r}, got {exp.mode!r}",
            file=file,
            line=line,
            field="mode",
        )
    if want == "abstain":
        for name in ("answers", "contains", "evidence_doc_ids"):
            if getattr(exp, name):
                raise InputError(
                    f"{label}an unanswerable case is scored on abstention only: leave {name} empty",
                    file=file,
                    line=line,
                    field=name,
                )
        return
    if not exp.evidence_doc_ids:
        raise InputError(
            f"{label}a {type_} case must name its evidence_doc_ids",
            file=file,
            line=line,
            field="evidence_doc_ids",
        )
    if not exp.answers and not exp.contains:
        raise InputError(
            f"{label}nothing to check: give answers or contains",
            file=file,
            line=line,
            field="answers",
        )
    if type_ == "false_premise" and not exp.excludes:
        raise InputError(
            f"{label}a false_premise case must name the false value in excludes",
            file=file,
            line=line,
            field="excludes",
        )


def _check(case: Case, obj: dict[str, Any], path: Path, line: int, label: str) -> Case:
    file = str(path)
    type_ = obj.get("type")
    if type_ is None:
        raise InputError(
            f"{label}missing type; one of {', '.join(ATTACK_TYPES)}",
            file=file,
            line=line,
            field="type",
        )
    if not isinstance(type_, str):
        raise InputError(
            f"{label}must be a string, got {type_name(type_)}", file=file, line=line, field="type"
        )
    if type_ in TYPE_MODES and obj.get("mode") is None:
        case = case.model_copy(
            update={"expected": case.expected.model_copy(update={"mode": TYPE_MODES[type_]})}
        )
    validate_attack_case(case, type_, file=file, line=line, label=label)
    meta = {**case.meta, "attack_type": type_, "origin": "dataset", "file": path.name, "line": line}
    return case.model_copy(update={"meta": meta})


def load_attack_cases(
    path: str | Path,
    *,
    corpus_ids: set[str] | frozenset[str] | None = None,
    format: str | None = None,
) -> list[Case]:
    """Attack cases from a JSONL or JSON file, in file order (rules in the module
    docstring)."""
    return load_questions(
        path, corpus_ids=corpus_ids, format=format, extra_keys=("type",), check=_check
    )

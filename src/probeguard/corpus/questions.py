"""Golden question files → ``list[Case]`` (probe ``"golden"``).

A file is JSONL (one object a line) or JSON (a list, or ``{"questions": [...]}``) of::

    {"id": "q1", "question": "...", "answers": ["..."], "evidence_doc_ids": ["doc-a"],
     "mode": "answer", "tags": ["multi-hop"]}

``question`` is required (a non-empty string). ``id`` is optional (a string or integer;
without one the case gets ``q-<12 hex of sha256(question)>``). ``answers``,
``evidence_doc_ids``, ``tags``, ``contains``, ``excludes``, ``must_cite`` and
``must_not_cite`` are lists of non-empty strings (default empty; the last two are document
ids the answer must / must not cite); ``mode`` is ``"answer"`` (default), ``"abstain"`` or ``"correct_premise"``
(see ``Expected``); ``meta`` is an optional object copied to ``Case.meta``. Any other key is
an error, so that a typo ("answer" for "answers") does not silently drop expectations.

Errors raise ``InputError`` naming the file, the 1-based line and the field, as the corpus
loaders do; duplicate ids name both lines, and with ``corpus_ids`` an evidence id that is
(or a ``must_cite`` / ``must_not_cite`` id) not in the corpus is an error.

Other case files reuse this format: ``extra_keys`` admits more keys, and ``check`` sees each
parsed case with its raw object and place, to validate those keys and return the case it
wants (e.g. the attack-case files of ``probeguard.dataset.attack_types``, which add ``type``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, get_args

from probeguard.core.cases import Case, Expected
from probeguard.core.errors import InputError
from probeguard.core.hashing import sha256_hex
from probeguard.corpus.file_reading import iter_json_records
from probeguard.corpus.record_validation import record_id, type_name, where

MODES: tuple[str, ...] = get_args(Expected.model_fields["mode"].annotation)
_LISTS = (
    "answers",
    "evidence_doc_ids",
    "tags",
    "contains",
    "excludes",
    "must_cite",
    "must_not_cite",
)
_KEYS = ("id", "question", "mode", "meta", *_LISTS)
_DOC_WORDS = {
    "evidence_doc_ids": "evidence document",
    "must_cite": "document to cite",
    "must_not_cite": "document not to cite",
}
_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json"}


def question_id(question: str) -> str:
    """The id of a question given without one: ``q-`` + 12 hex of sha256(question)."""
    return "q-" + sha256_hex(question)[:12]


def _string_list(value: Any, *, file: str, line: int, label: str, field: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise InputError(
            f"{label}must be a list of strings, got {type_name(value)}",
            file=file,
            line=line,
            field=field,
        )
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise InputError(
                f"{label}item {i} must be a string, got {type_name(item)}",
                file=file,
                line=line,
                field=field,
            )
        if not item.strip():
            raise InputError(f"{label}item {i} is empty", file=file, line=line, field=field)
    return tuple(value)


CaseCheck = Callable[[Case, dict[str, Any], Path, int, str], Case]
"""``check(case, obj, path, line, label) -> case``: validates a parsed case (raising
``InputError`` with the file, line and field) and returns the case to keep."""


def _case(
    obj: Any,
    *,
    path: Path,
    line: int,
    label: str,
    corpus_ids: set[str] | frozenset[str] | None,
    extra_keys: Sequence[str] = (),
) -> tuple[Case, bool]:
    file = str(path)
    if not isinstance(obj, dict):
        raise InputError(
            f"{label}expected a JSON object, got {type_name(obj)}", file=file, line=line
        )
    allowed = (*_KEYS, *extra_keys)
    unknown = sorted(set(obj) - set(allowed))
    if unknown:
        raise InputError(
            f"{label}unknown field; allowed: {', '.join(allowed)}",
            file=file,
            line=line,
            field=unknown[0],
        )
    question = obj.get("question")
    if question is None:
        raise InputError(f"{label}missing question", file=file, line=line, field="question")
    if not isinstance(question, str):
        raise InputError(
            f"{label}must be a string, got {type_name(question)}",
            file=file,
            line=line,
            field="question",
        )
    if not question.strip():
        raise InputError(f"{label}is empty", file=file, line=line, field="question")
    explicit = obj.get("id") not in (None, "")
    case_id = (
        record_id(obj["id"], path=path, line=line, label=label, field="id")
        if explicit
        else question_id(question)
    )
    mode = obj.get("mode", "answer")
    if mode is None:
        mode = "answer"
    if mode not in MODES:
        raise InputError(
            f"{label}must be one of {', '.join(MODES)}, got {mode!r}",
            file=file,
            line=line,
            field="mode",
        )
    lists = {
        name: _string_list(obj[name], file=file, line=line, label=label, field=name)
        for name in _LISTS
        if obj.get(name) is not None
    }
    if corpus_ids is not None:
        for name in ("evidence_doc_ids", "must_cite", "must_not_cite"):
            for doc_id in lists.get(name, ()):
                if doc_id not in corpus_ids:
                    raise InputError(
                        f"{label}{_DOC_WORDS[name]} '{doc_id}' is not in the corpus",
                        file=file,
                        line=line,
                        field=name,
                    )
    meta = obj.get("meta")
    if meta is None:
        meta = {}
    elif not isinstance(meta, dict):
        raise InputError(
            f"{label}must be an object, got {type_name(meta)}", file=file, line=line, field="meta"
        )
    expected = Expected(
        mode=mode,
        answers=lists.get("answers", ()),
        evidence_doc_ids=lists.get("evidence_doc_ids", ()),
        contains=lists.get("contains", ()),
        excludes=lists.get("excludes", ()),
        must_cite=lists.get("must_cite", ()),
        must_not_cite=lists.get("must_not_cite", ()),
    )
    case = Case(
        id=case_id,
        question=question,
        probe="golden",
        expected=expected,
        tags=lists.get("tags", ()),
        meta=dict(meta),
    )
    return case, explicit


def load_questions(
    path: str | Path,
    *,
    corpus_ids: set[str] | frozenset[str] | None = None,
    format: str | None = None,
    extra_keys: Sequence[str] = (),
    check: CaseCheck | None = None,
) -> list[Case]:
    """Golden cases from a JSONL or JSON question file, in file order (see the module
    docstring). ``corpus_ids``, when given, must hold every ``evidence_doc_ids`` entry;
    ``extra_keys`` are further allowed keys, which ``check`` (called on every parsed case
    before the duplicate-id check) validates."""
    path = Path(path)
    if not path.is_file():
        raise InputError("no such file", file=str(path))
    fmt = format or _SUFFIXES.get(path.suffix.lower())
    if fmt not in ("jsonl", "json"):
        raise InputError(
            f"question files are JSONL or JSON; cannot read "
            f"{'format ' + repr(fmt) if format else repr(path.suffix)}; "
            f"pass format='jsonl' or 'json'",
            file=str(path),
        )
    cases: list[Case] = []
    seen: dict[str, str] = {}
    for line, label, obj in iter_json_records(path, fmt, container_key="questions"):
        case, explicit = _case(
            obj, path=path, line=line, label=label, corpus_ids=corpus_ids, extra_keys=extra_keys
        )
        if check is not None:
            case = check(case, obj, path, line, label)
        here = where(label, line)
        if case.id in seen:
            what = (
                f"duplicate id '{case.id}'"
                if explicit
                else f"duplicate question (content id '{case.id}')"
            )
            raise InputError(
                f"{what}: first at {seen[case.id]}, again at {here}",
                file=str(path),
                line=line,
                field="id",
            )
        seen[case.id] = here
        cases.append(case)
    if not cases:
        raise InputError("the file has no questions", file=str(path))
    return cases


__all__ = ["CaseCheck", "MODES", "load_questions", "question_id"]

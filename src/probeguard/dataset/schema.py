"""The case schema (version ``SCHEMA_VERSION``): one record for golden questions, attack cases
and eval records, written one JSON object a line (``cases.jsonl``).

::

    {"version": 1, "id": "q1", "input": "How long is the refund window?",
     "expected": {"answers": ["30 days"], "contains": [], "excludes": ["14 days"],
                  "must_abstain": false, "must_correct_premise": false,
                  "must_cite": ["refund-policy"], "must_not_cite": []},
     "evidence": [{"doc_id": "refund-policy", "start": 120, "end": 127}],
     "type": "temporal_conflict", "evolution": null, "tags": ["policy"],
     "difficulty": "easy", "source": "written", "split": null, "meta": {}}

Every key but ``id`` and ``input`` may be left out (defaults shown in ``DatasetCase``).
Unknown keys are errors (``extra="forbid"``), so a misspelt field is named, not dropped.
``probeguard dataset schema`` prints the JSON schema. The conversions from and to the older
formats (golden questions, attack cases, eval records) are in ``probeguard.dataset.formats``;
the checks that need the corpus (spans, evidence ids, leakage) in ``probeguard.dataset.validate``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "EVOLUTIONS",
    "SCHEMA_VERSION",
    "SOURCES",
    "DatasetCase",
    "Evidence",
    "ExpectedSpec",
    "Recorded",
    "case_json_schema",
]

SCHEMA_VERSION: Literal[1] = 1
"""Bumped on any change a reader of version 1 could not load."""

SOURCES = ("synthesized", "written", "imported")
"""Where a case came from."""

EVOLUTIONS = (
    "reasoning",
    "multi_context",
    "concretizing",
    "constrained",
    "comparative",
    "hypothetical",
    "in_breadth",
)
"""The question evolutions a synthesizer names (``DatasetCase.evolution``); other labels are
allowed, these are the documented ones."""

_STRICT = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
_NonEmpty = Field(min_length=1)


class ExpectedSpec(BaseModel):
    """What a correct answer looks like. Empty lists mean "not checked"."""

    model_config = _STRICT

    answers: tuple[str, ...] = ()
    """Acceptable answer strings; any one counts."""
    contains: tuple[str, ...] = ()
    """Strings the answer must hold, every one."""
    excludes: tuple[str, ...] = ()
    """Strings the answer must not hold (a false premise's value, an archived figure). Allowed
    on an unanswerable case too: a value the pipeline must not make up."""
    must_abstain: bool = False
    """The pipeline should decline (the corpus does not say)."""
    must_correct_premise: bool = False
    """The answer should correct the question's false premise."""
    must_cite: tuple[str, ...] = ()
    """Document ids the answer must cite, every one."""
    must_not_cite: tuple[str, ...] = ()
    """Document ids the answer must not cite (a draft, an archived copy)."""

    @model_validator(mode="after")
    def _one_mode(self) -> ExpectedSpec:
        if self.must_abstain and self.must_correct_premise:
            raise ValueError("must_abstain and must_correct_premise exclude each other")
        return self

    @property
    def mode(self) -> Literal["answer", "abstain", "correct_premise"]:
        """The ``core.cases.Expected`` mode: ``abstain``, ``correct_premise`` or ``answer``."""
        if self.must_abstain:
            return "abstain"
        return "correct_premise" if self.must_correct_premise else "answer"


class Evidence(BaseModel):
    """One piece of evidence: a document, optionally a character span of its text
    (``text[start:end]``, 0-based, end exclusive)."""

    model_config = _STRICT

    doc_id: str = _NonEmpty
    """The corpus document that holds the evidence."""
    start: int | None = Field(default=None, ge=0)
    """First character of the span; None: the whole document."""
    end: int | None = Field(default=None, ge=0)
    """One past the last character of the span; given with ``start``."""
    text: str | None = None
    """The span's text as the writer saw it; ``validate`` checks it equals
    ``document.text[start:end]``."""

    @model_validator(mode="after")
    def _span(self) -> Evidence:
        if (self.start is None) != (self.end is None):
            raise ValueError("give start and end together")
        if self.start is not None and self.end is not None and self.end <= self.start:
            raise ValueError(f"end ({self.end}) must be greater than start ({self.start})")
        return self


class Recorded(BaseModel):
    """A pipeline's recorded output, scored instead of calling a pipeline (eval records)."""

    model_config = _STRICT

    answer: str | None = None
    """The answer to score; None: the configured pipeline answers."""
    contexts: tuple[str, ...] | None = None
    """The retrieved passages, rank 1 first; None: the pipeline's retrieved chunks."""
    relevance: tuple[bool, ...] | None = None
    """One reference relevance label per context (context precision)."""

    @model_validator(mode="after")
    def _labels(self) -> Recorded:
        if self.relevance is not None and (
            self.contexts is None or len(self.relevance) != len(self.contexts)
        ):
            raise ValueError("relevance needs one label per context")
        return self


class DatasetCase(BaseModel):
    """One case of a dataset: a question, what a correct answer looks like, and where the
    evidence is."""

    model_config = _STRICT

    version: Literal[1] = SCHEMA_VERSION
    """The schema version (``SCHEMA_VERSION``)."""
    id: str = _NonEmpty
    """Unique within the dataset."""
    input: str = _NonEmpty
    """The question put to the pipeline."""
    expected: ExpectedSpec = Field(default_factory=ExpectedSpec)
    """What a correct answer looks like."""
    evidence: tuple[Evidence, ...] = ()
    """The documents (and spans) that hold the answer; all are needed for multi-hop questions."""
    type: str | None = None
    """The attack type (``probeguard.dataset.attack_types.ATTACK_TYPES``, whose rules then
    apply) or another label; None: a plain golden question."""
    evolution: str | None = None
    """How the question was evolved from a seed (``EVOLUTIONS``); None: not evolved."""
    tags: tuple[str, ...] = ()
    """Free labels, counted in the manifest."""
    difficulty: str | int | float | None = None
    """The writer's difficulty label or score."""
    source: Literal["synthesized", "written", "imported"] = "written"
    """Where the case came from (``SOURCES``)."""
    split: str | None = None
    """The split the case belongs to (``train``, ``dev``, ``test``); None: unsplit."""
    recorded: Recorded | None = None
    """A recorded pipeline output (eval records); None: the pipeline is called."""
    meta: dict[str, Any] = Field(default_factory=dict)
    """Anything else: generator name, version and seed (``generator``, ``generator_version``,
    ``seed``), an importer's unmapped fields, notes."""

    @property
    def evidence_doc_ids(self) -> tuple[str, ...]:
        """The evidence documents, first mention first, each once."""
        return tuple(dict.fromkeys(e.doc_id for e in self.evidence))


def case_json_schema() -> dict[str, Any]:
    """The JSON schema of one record (``DatasetCase``), as ``probeguard dataset schema``
    prints it."""
    return DatasetCase.model_json_schema()

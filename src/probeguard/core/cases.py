"""Cases: one question put to a pipeline, with what a correct answer looks like.

A probe generates cases; the runner executes them; scoring compares the output with
``expected``. The cache key depends only on what can change the pipeline's output — the
question and the variation — never on the case id, tags or expectations.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from probeguard.core.hashing import digest, sha256_hex
from probeguard.core.pipeline import Variation


class Expected(BaseModel):
    """What a correct answer looks like. Empty lists mean "not checked"."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Literal["answer", "abstain", "correct_premise"] = "answer"
    """``answer``: the answer should hold one of ``answers``; ``abstain``: the pipeline
    should refuse; ``correct_premise``: the answer should correct the question's premise."""
    answers: tuple[str, ...] = ()
    """Acceptable answer strings (any one counts)."""
    evidence_doc_ids: tuple[str, ...] = ()
    """Documents that hold the evidence; all are needed for multi-hop questions."""
    contains: tuple[str, ...] = ()
    """Strings the answer must hold, every one."""
    excludes: tuple[str, ...] = ()
    """Strings the answer must not hold (a false premise's value, an archived figure)."""
    must_cite: tuple[str, ...] = ()
    """Documents the answer must cite, every one (checked when it cites; left out of the
    serialised case when empty)."""
    must_not_cite: tuple[str, ...] = ()
    """Documents the answer must not cite (a draft, an archived copy; left out of the
    serialised case when empty)."""

    @model_serializer(mode="wrap")
    def _omit_empty_citation_lists(self, handler: SerializerFunctionWrapHandler) -> Any:
        # Keeps the serialised form of a case without citation expectations (run logs,
        # reports) exactly what it was before the two fields existed.
        data = handler(self)
        if isinstance(data, dict):
            for key in ("must_cite", "must_not_cite"):
                if not data.get(key):
                    data.pop(key, None)
        return data


class Case(BaseModel):
    """One question to put to a pipeline."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    probe: str = "golden"
    """The probe (or suite) that generated the case."""
    variation: Variation = Field(default_factory=Variation)
    expected: Expected = Field(default_factory=Expected)
    tags: tuple[str, ...] = ()
    meta: dict[str, Any] = Field(default_factory=dict)
    """Probe-specific evidence for the reader (e.g. the paraphrase kind, the injected doc id)."""

    def call_key(self, pipeline_fingerprint: str) -> str:
        """Content address of the pipeline call this case makes:
        sha256(pipeline fingerprint, question, canonical variation)."""
        return sha256_hex(pipeline_fingerprint, self.question, variation_digest(self.variation))


_DEFAULT_VARIATION = Variation()
_DEFAULT_VARIATION_DIGEST = digest(_DEFAULT_VARIATION.model_dump(mode="json"))


def variation_digest(variation: Variation) -> str:
    """sha256 of the canonical JSON of ``variation.model_dump(mode="json")``. Most cases
    carry the default variation: its digest is computed once at import (an equality check
    instead of a dump, canonical JSON and sha256 per case; the digest is the same)."""
    if variation == _DEFAULT_VARIATION:
        return _DEFAULT_VARIATION_DIGEST
    return digest(variation.model_dump(mode="json"))

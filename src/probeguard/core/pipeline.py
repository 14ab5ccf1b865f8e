"""The pipeline protocol: what any RAG pipeline under test implements, and what it returns.

A pipeline answers a question (``answer`` or, natively async, ``aanswer``) and may declare
optional *capabilities* that probes and attribution use for counterfactual re-runs. A
``Variation`` asks for them; a pipeline that lacks one raises
``UnsupportedCapabilityError`` rather than quietly ignoring it.

| capability        | Variation field      | meaning                                                   |
|-------------------|----------------------|-----------------------------------------------------------|
| ``overlay``       | ``overlay``          | extra documents visible to retrieval, no re-index         |
| ``mask``          | ``exclude_doc_ids``  | documents hidden from retrieval (a "clean corpus")        |
| ``chunking``      | ``chunking``         | an alternative chunking, e.g. ``"document"`` (whole docs) |
| ``oracle_context``| ``contexts``         | generate from given contexts, skipping retrieval          |
| ``prompt_override``| ``prompt``          | a different prompt template (name or template text)       |
| ``retrieval``     | ``retrieval``        | retrieval overrides: ``{"mode": "hybrid", "top_k": 10}``  |
| ``retrieve_only`` | ``retrieve_only``    | return the retrieved contexts without generating          |
| ``defences``      | ``defences``         | per-call overrides of the pipeline's ``DefencesConfig``,  |
|                   |                      | e.g. ``{"sanitise": True, "spotlight": True}``            |

A ``Variation`` serialises without its ``defences`` key while that is empty, so the cache keys
of calls made before the field existed are unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)

from probeguard.core.defences import validate_overrides
from probeguard.core.documents import Document
from probeguard.core.errors import UnsupportedCapabilityError

ORACLE_DOC_ID = "oracle"
"""The document id of oracle contexts (``Variation.contexts``) in a pipeline's output."""


class Capability(StrEnum):
    OVERLAY = "overlay"
    MASK = "mask"
    CHUNKING = "chunking"
    ORACLE_CONTEXT = "oracle_context"
    PROMPT_OVERRIDE = "prompt_override"
    RETRIEVAL = "retrieval"
    RETRIEVE_ONLY = "retrieve_only"
    DEFENCES = "defences"


class Variation(BaseModel):
    """Counterfactual knobs for one call. The default (all empty) is the pipeline as
    configured; each non-empty field needs the matching capability."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    overlay: tuple[Document, ...] = ()
    """Documents added to the retrievable corpus for this call only."""
    exclude_doc_ids: tuple[str, ...] = ()
    """Documents hidden from retrieval for this call (sorted for stable hashing)."""
    chunking: str | None = None
    """Name of an alternative chunking, e.g. ``"document"``."""
    contexts: tuple[str, ...] | None = None
    """Oracle contexts handed straight to the generator (retrieval is skipped)."""
    prompt: str | None = None
    """A prompt template name (e.g. ``"hardened"``) or a full template text."""
    retrieval: dict[str, Any] = Field(default_factory=dict)
    """Retrieval overrides, e.g. ``{"mode": "hybrid", "top_k": 10}``; ``{"rerank": False}``
    asks for the retriever's own order without the pipeline's re-ranker."""
    retrieve_only: bool = False
    """Skip generation: the output carries the retrieved contexts and an empty answer. Probes
    that measure only retrieval (ranks under paraphrase, whole-document retrieval) ask for it
    when the pipeline supports it, so a slow generator is not run for nothing."""
    sample: int = Field(default=0, ge=0)
    """Repeat index for reruns of the same call: pipelines ignore it, but it is part of the
    cache key, so ``sample=1`` is a fresh call (used to measure an answer's own variation)."""
    defences: dict[str, Any] = Field(default_factory=dict)
    """Per-call overrides of the pipeline's defences (fields of
    ``probeguard.pipeline.defences.DefencesConfig``, e.g. ``{"sanitise": True}``), validated
    and normalised on construction: an unknown key or a bad value raises ``ValueError``."""

    @field_validator("exclude_doc_ids")
    @classmethod
    def _sorted_ids(cls, ids: tuple[str, ...]) -> tuple[str, ...]:
        # A mask is a set: the same documents in another order are the same call (and key).
        return tuple(sorted(set(ids)))

    @field_validator("defences")
    @classmethod
    def _valid_defences(cls, overrides: dict[str, Any]) -> dict[str, Any]:
        if not overrides:
            return {}
        return validate_overrides(overrides)

    @model_serializer(mode="wrap")
    def _omit_empty_defences(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Keeps the serialised form (and so every cache key) of a call without defence
        # overrides exactly what it was before the field existed.
        data: dict[str, Any] = handler(self)
        if not self.defences and isinstance(data, dict):
            data.pop("defences", None)
        return data

    def required_capabilities(self) -> frozenset[Capability]:
        needed: set[Capability] = set()
        if self.overlay:
            needed.add(Capability.OVERLAY)
        if self.exclude_doc_ids:
            needed.add(Capability.MASK)
        if self.chunking is not None:
            needed.add(Capability.CHUNKING)
        if self.contexts is not None:
            needed.add(Capability.ORACLE_CONTEXT)
        if self.prompt is not None:
            needed.add(Capability.PROMPT_OVERRIDE)
        if self.retrieval:
            needed.add(Capability.RETRIEVAL)
        if self.retrieve_only:
            needed.add(Capability.RETRIEVE_ONLY)
        if self.defences:
            needed.add(Capability.DEFENCES)
        return frozenset(needed)

    def is_default(self) -> bool:
        return not self.required_capabilities()


@dataclass(frozen=True, slots=True)
class Context:
    """A context passage as handed to a generator; ``chunk_id`` is what citations name."""

    chunk_id: str
    text: str
    title: str = ""


class RetrievedChunk(BaseModel):
    """One retrieved context as the generator saw it. ``rank`` is 1-based."""

    model_config = ConfigDict(extra="forbid")

    chunk_id: str
    doc_id: str
    text: str
    rank: int
    score: float | None = None
    title: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)


class Usage(BaseModel):
    """Token usage where the generator reports it."""

    model_config = ConfigDict(extra="forbid")

    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class PipelineOutput(BaseModel):
    """What one call of a pipeline returns."""

    model_config = ConfigDict(extra="forbid")

    answer: str
    cited_chunk_ids: list[str] = Field(default_factory=list)
    """Chunk ids the answer cites (for the reference pipeline, from ``[n]`` markers)."""
    retrieved: list[RetrievedChunk] = Field(default_factory=list)
    refused: bool = False
    """The pipeline declined to answer (no evidence passed its gate, or it said so)."""
    latency_s: float | None = None
    usage: Usage = Field(default_factory=Usage)
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else the pipeline wants recorded (e.g. the prompt name used)."""


@runtime_checkable
class Pipeline(Protocol):
    """What the runner calls. Implement ``answer``; implement ``aanswer`` too when the
    pipeline is natively async (an HTTP endpoint): the runner prefers it. A sync-only
    pipeline runs in a worker thread, so ``answer`` must be thread-safe."""

    name: str
    capabilities: frozenset[Capability]

    def fingerprint(self) -> str:
        """sha256 of the canonical configuration of everything that can change an output.
        Part of every cache key: change the pipeline, and cached answers no longer apply."""
        ...

    def answer(self, question: str, variation: Variation | None = None) -> PipelineOutput: ...


@runtime_checkable
class PreparesIndexes(Protocol):
    """A pipeline that can build, before any call, the indexes that calls with the given
    variations read (``ReferencePipeline.prepare``); the runner's callers prepare it."""

    def prepare(self, variations: Iterable[Variation | None]) -> object: ...


def check_capabilities(pipeline: Pipeline, variation: Variation | None) -> None:
    """Raise ``UnsupportedCapabilityError`` if ``variation`` needs what ``pipeline`` lacks."""
    if variation is None:
        return
    missing = variation.required_capabilities() - frozenset(pipeline.capabilities)
    if missing:
        raise UnsupportedCapabilityError(pipeline.name, {str(m) for m in missing})

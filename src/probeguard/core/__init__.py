"""The shared nouns every layer uses; this package imports nothing else of ProbeGuard.

Documents and chunks, cases and their expectations, the pipeline's input and output
(``Variation``, ``PipelineOutput``, ``Context``, ``Capability``), the records a run saves,
``Estimate``, and the error types.
"""

from probeguard.core.cases import Case, Expected
from probeguard.core.documents import Chunk, Document, corpus_fingerprint
from probeguard.core.errors import (
    InputError,
    MissingExtraError,
    PipelineCallError,
    ProbeGuardError,
    UnsupportedCapabilityError,
)
from probeguard.core.estimate import Estimate
from probeguard.core.pipeline import (
    Capability,
    Context,
    Pipeline,
    PipelineOutput,
    RetrievedChunk,
    Usage,
    Variation,
)
from probeguard.core.records import CaseError, CaseRecord

__all__ = [
    "Capability",
    "Case",
    "CaseError",
    "CaseRecord",
    "Chunk",
    "Context",
    "Document",
    "Estimate",
    "Expected",
    "InputError",
    "MissingExtraError",
    "Pipeline",
    "PipelineCallError",
    "PipelineOutput",
    "ProbeGuardError",
    "RetrievedChunk",
    "UnsupportedCapabilityError",
    "Usage",
    "Variation",
    "corpus_fingerprint",
]

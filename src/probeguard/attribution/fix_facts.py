"""What a fix recommendation is (``Recommendation``) and what it may depend on
(``CaseFacts``); the choice itself is ``attribution.recommend``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = [
    "DEFAULT_TOP_K",
    "LEXICAL_BACKENDS",
    "MAX_TOP_K",
    "REF",
    "CaseFacts",
    "Recommendation",
    "trusted_source_globs",
]

REF = "pipeline.reference"
DEFAULT_TOP_K = 5
"""``ReferencePipelineConfig.top_k``'s default, for a config that does not say."""
MAX_TOP_K = 200
"""``ReferencePipelineConfig.top_k``'s upper bound."""
LEXICAL_BACKENDS = frozenset({"bm25"})
"""The reference pipeline's retrieval backends that match words, not meanings."""


@dataclass(frozen=True)
class Recommendation:
    cause: str
    title: str
    config_patch: dict[str, Any]
    other_pipelines: str
    why: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def key(self) -> str:
        """Identity for counting the same fix across cases."""
        import json

        return json.dumps([self.cause, self.title, self.config_patch], sort_keys=True, default=str)


@dataclass(frozen=True)
class CaseFacts:
    """What a recommendation may depend on."""

    hints: frozenset[str] = frozenset()
    """The failing probe's fix hints for the case (``Probe.case_fix_hints``)."""
    abstain: bool = False
    removed_statuses: tuple[str, ...] = ()
    """``metadata.status`` of the documents the clean corpus masked."""
    top_score: float | None = None
    backend: str | None = None
    pipeline: Mapping[str, Any] = field(default_factory=dict)
    """The reference pipeline's config (``ReferencePipelineConfig`` as JSON), when known."""
    calibrated_gate: Mapping[str, Any] | None = None
    """``metrics.gate.best_gate`` over the run (answerable vs unanswerable top scores)."""
    trusted_sources: tuple[str, ...] = ()
    """Glob patterns of the scanned corpus's own sources (``trusted_source_globs``)."""
    reference: bool = True
    """The scanned pipeline is the reference pipeline (a ``config_patch`` can apply)."""
    mechanism: str = ""
    """The failure's mechanism (``core.mechanisms`` id), when known."""
    injected: bool = False
    """The failing case injected documents (its variation's overlay), which the vetted
    corpus's sources do not cover."""


def trusted_source_globs(sources: Sequence[str], limit: int = 10) -> tuple[str, ...]:
    """Trust-tier patterns for the corpus the user vetted: ``*<file>:*`` for sources of the
    loaders' ``<path>:<line>`` form (independent of where the file sits), the source itself
    otherwise; sorted, at most ``limit`` (more distinct sources than that: none — tiers
    should then come from document metadata)."""
    import os

    globs = set()
    for source in sources:
        if not source:
            continue
        path, _, line = source.rpartition(":")
        globs.add(f"*{os.path.basename(path)}:*" if path and line.isdigit() else source)
    return tuple(sorted(globs)) if len(globs) <= limit else ()

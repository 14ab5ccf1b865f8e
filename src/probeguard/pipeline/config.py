"""The pipeline under test (``ScanConfig.pipeline``): the reference pipeline, a Python callable
or an HTTP endpoint.

Secrets never live in the config: the OpenAI-compatible generator and the HTTP adapter name
the *environment variables* that hold keys (``api_key_env``, ``${NAME}`` in headers).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from probeguard.core.config import StrictModel
from probeguard.core.defences import DefencesConfig
from probeguard.models.embedders.factory import EMBEDDERS


class ReferencePipelineConfig(StrictModel):
    """The built-in pipeline: chunker → retriever (→ re-ranker) → generator."""

    chunker: dict[str, Any] = Field(
        default_factory=lambda: {"name": "tokens", "size": 128, "overlap": 32}
    )
    embedder: dict[str, Any] = Field(default_factory=lambda: {"name": "minilm"})
    """Used by dense and hybrid retrieval (and by the chroma store)."""
    retriever: dict[str, Any] = Field(default_factory=lambda: {"name": "hybrid"})
    top_k: int = Field(default=5, ge=1, le=200)
    reranker: dict[str, Any] | None = None
    """e.g. ``{"name": "lexical"}`` or ``{"name": "cross-encoder", "model_name": ...}``."""
    rerank_candidates: int = Field(default=20, ge=1)
    generator: dict[str, Any] = Field(default_factory=lambda: {"name": "extractive"})
    prompt: str = "default"
    """A template name (``default``, ``hardened``) or a template text with ``{question}``."""
    defences: DefencesConfig = Field(default_factory=DefencesConfig)
    """Optional defences (trust tiers, archived-document demotion, near-duplicate
    suppression, conflict and grounding checks, the instruction sanitiser and spotlighting,
    a per-backend ``min_score`` gate, query expansion), all off by default: see
    ``probeguard.pipeline.defences``."""

    @field_validator("embedder")
    @classmethod
    def _known_embedder(cls, spec: dict[str, Any]) -> dict[str, Any]:
        """The embedder's name is checked even when the retriever (BM25) never builds it."""
        name = spec.get("name")
        if name not in EMBEDDERS:
            raise ValueError(f"unknown embedder {name!r}; known: {', '.join(sorted(EMBEDDERS))}")
        return spec


class CallablePipelineConfig(StrictModel):
    target: str
    """``package.module:function``."""
    version: str = ""
    """Bump when the function's behaviour changes: it is part of the cache key."""


class HttpPipelineConfig(StrictModel):
    url: str
    method: str = "POST"
    headers: dict[str, str] = Field(default_factory=dict)
    """Values may reference environment variables as ``${NAME}`` (expanded per call)."""
    request_template: Any = Field(default_factory=lambda: {"question": "{question}"})
    answer_path: str = "answer"
    contexts_path: str | None = None
    context_text_field: str | None = "text"
    doc_id_field: str | None = "doc_id"
    chunk_id_field: str | None = "chunk_id"
    score_field: str | None = "score"
    citations_path: str | None = None
    refused_path: str | None = None
    timeout_s: float = 60.0
    variation_field: str | None = None
    """When set, the request carries the ``Variation`` JSON under this key, and the endpoint
    is trusted to honour the ``capabilities`` listed below."""
    capabilities: list[str] = Field(default_factory=list)
    version: str = ""
    """Bump when the service's behaviour changes: it is part of the cache key."""


class PipelineConfig(StrictModel):
    type: Literal["reference", "callable", "http"] = "reference"
    reference: ReferencePipelineConfig = Field(default_factory=ReferencePipelineConfig)
    callable: CallablePipelineConfig | None = None
    http: HttpPipelineConfig | None = None

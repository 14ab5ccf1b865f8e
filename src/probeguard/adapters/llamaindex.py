"""``probeguard.pipeline.adapters.llamaindex`` under a short name (see its docstring)."""

from probeguard.pipeline.adapters.llamaindex import (
    LlamaIndexPipeline,
    ProbeGuardEmbedding,
    chunk_nodes,
    whole_document_nodes,
)

__all__ = ["LlamaIndexPipeline", "ProbeGuardEmbedding", "chunk_nodes", "whole_document_nodes"]

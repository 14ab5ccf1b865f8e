"""``probeguard.pipeline.adapters.langchain`` under a short name (see its docstring)."""

from probeguard.pipeline.adapters.langchain import (
    GeneratorRunnable,
    LangChainPipeline,
    ProbeGuardEmbeddings,
    whole_documents,
)

__all__ = ["GeneratorRunnable", "LangChainPipeline", "ProbeGuardEmbeddings", "whole_documents"]

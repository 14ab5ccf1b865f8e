"""Adapters: wrap a pipeline you already have (a Python function, an HTTP endpoint, a
LangChain vector store or a LlamaIndex ``VectorStoreIndex`` with its generation step) so the
runner can call it.

The framework adapters (``probeguard.pipeline.adapters.langchain``, ``.llamaindex``) need the
``probeguard[langchain]`` / ``probeguard[llamaindex]`` extras and are imported only when used;
they are not re-exported here."""

from probeguard.pipeline.adapters.callable import CallablePipeline
from probeguard.pipeline.adapters.http import HttpPipeline
from probeguard.pipeline.adapters.jsonpath import PathError, resolve

__all__ = ["CallablePipeline", "HttpPipeline", "PathError", "resolve"]

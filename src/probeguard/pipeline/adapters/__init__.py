"""Adapters: wrap a pipeline you already have (a Python function, an HTTP endpoint, a
LangChain retriever or vector store with its generation step) so the runner can call it.

The LangChain adapter (``probeguard.pipeline.adapters.langchain``) needs the
``probeguard[langchain]`` extra and is imported only when used; it is not re-exported here."""

from probeguard.pipeline.adapters.callable import CallablePipeline
from probeguard.pipeline.adapters.http import HttpPipeline
from probeguard.pipeline.adapters.jsonpath import PathError, resolve

__all__ = ["CallablePipeline", "HttpPipeline", "PathError", "resolve"]

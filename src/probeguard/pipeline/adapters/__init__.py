"""Adapters: wrap a pipeline you already have (a Python function, an HTTP endpoint) so the
runner can call it. Framework adapters (langchain, llamaindex, chroma) are optional extras."""

from probeguard.pipeline.adapters.callable import CallablePipeline
from probeguard.pipeline.adapters.http import HttpPipeline
from probeguard.pipeline.adapters.jsonpath import PathError, resolve

__all__ = ["CallablePipeline", "HttpPipeline", "PathError", "resolve"]

"""What ``probeguard list`` shows: every part a pipeline can be assembled from, by the name a
config uses, with the first line of its docstring. Classes are looked up in the factories'
own registries (one source of truth); modules import lazily, so listing needs no extra."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from probeguard.corpus.chunkers import CHUNKERS
from probeguard.models.embedders.factory import EMBEDDERS
from probeguard.models.generators.factory import GENERATORS
from probeguard.models.prompts import TEMPLATES
from probeguard.pipeline.rerankers import RERANKERS
from probeguard.pipeline.retrievers.factory import RETRIEVERS
from probeguard.probes import load_probes


def _summary(obj: Any, limit: int = 100) -> str:
    """The first sentence of ``obj``'s docstring (or of ``obj`` itself when it is a string)."""
    doc = obj if isinstance(obj, str) else (getattr(obj, "__doc__", None) or "")
    first = " ".join(doc.strip().split("\n\n")[0].split())
    first = first.split(". ")[0].rstrip(".")
    return first if len(first) <= limit else first[: limit - 1] + "…"


def _lazy(registry: Mapping[str, tuple[str, str]]) -> dict[str, str]:
    out = {}
    for name, (module, attr) in sorted(registry.items()):
        try:
            out[name] = _summary(getattr(importlib.import_module(module), attr))
        except ImportError as exc:  # a part whose module itself needs an extra
            out[name] = f"(unavailable: {exc})"
    return out


def parts() -> dict[str, dict[str, str]]:
    def classes(reg: Mapping[str, Any]) -> dict[str, str]:
        return {name: _summary(cls) for name, cls in sorted(reg.items())}

    return {
        "pipelines": {
            "reference": "built-in chunker → retriever (→ re-ranker) → generator; all capabilities",
            "callable": "a Python function 'package.module:function'",
            "http": "an HTTP endpoint with a request template and response paths",
        },
        "chunkers": classes(CHUNKERS),
        "embedders": _lazy(EMBEDDERS),
        "retrievers": _lazy(RETRIEVERS),
        "rerankers": _lazy(RERANKERS),
        "generators": _lazy(GENERATORS),
        "prompts": {name: _summary(t.system) for name, t in sorted(TEMPLATES.items())},
        "probes": {name: cls.goal for name, cls in load_probes().items()},
    }

"""Build a generator from a config mapping: ``{"name": "extractive", "max_sentences": 2}``.

The other keys are the generator's constructor arguments; an unknown name or setting raises
``ValueError`` listing the accepted ones. Generator modules import lazily, so asking for the
extractive generator never touches llama.cpp or aiohttp.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any, Mapping

from probeguard.pipeline.generators.base import Generator

__all__ = ["GENERATORS", "make_generator"]

GENERATORS: dict[str, tuple[str, str]] = {
    "extractive": ("probeguard.pipeline.generators.extractive", "ExtractiveGenerator"),
    "llama_cpp": ("probeguard.pipeline.generators.llama_cpp", "LlamaCppGenerator"),
    "openai": ("probeguard.pipeline.generators.openai_compat", "OpenAICompatibleGenerator"),
}
"""Generator name → (module, class)."""


def make_generator(spec: Mapping[str, Any]) -> Generator:
    """The generator ``spec["name"]`` built with the remaining keys as its settings."""
    if not isinstance(spec, Mapping) or "name" not in spec:
        raise ValueError(f"a generator spec needs a 'name' (known: {', '.join(GENERATORS)})")
    settings = dict(spec)
    name = settings.pop("name")
    if name not in GENERATORS:
        raise ValueError(f"unknown generator '{name}' (known: {', '.join(GENERATORS)})")
    module_name, class_name = GENERATORS[name]
    cls = getattr(importlib.import_module(module_name), class_name)
    accepted = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    unknown = sorted(set(settings) - set(accepted))
    if unknown:
        raise ValueError(f"unknown setting(s) {', '.join(repr(u) for u in unknown)} for generator "
                         f"'{name}' (accepted: {', '.join(accepted)})")
    generator: Generator = cls(**settings)
    return generator

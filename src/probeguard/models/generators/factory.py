"""Build a generator from a config mapping: ``{"name": "extractive", "max_sentences": 2}``.

The other keys are the generator's constructor arguments; an unknown name or setting raises
``ValueError`` listing the accepted ones. Generator modules import lazily, so asking for the
extractive generator never touches llama.cpp or aiohttp.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from probeguard.core.plugins import build
from probeguard.models.generators.base import Generator

__all__ = ["GENERATORS", "make_generator"]

GENERATORS: dict[str, tuple[str, str]] = {
    "extractive": ("probeguard.models.generators.extractive", "ExtractiveGenerator"),
    "llama_cpp": ("probeguard.models.generators.llama_cpp", "LlamaCppGenerator"),
    "openai": ("probeguard.models.generators.openai_compat", "OpenAICompatibleGenerator"),
}
"""Generator name → (module, class)."""


def make_generator(spec: Mapping[str, Any]) -> Generator:
    """The generator ``spec["name"]`` built with the remaining keys as its settings."""
    generator: Generator = build(GENERATORS, "generator", spec)
    return generator

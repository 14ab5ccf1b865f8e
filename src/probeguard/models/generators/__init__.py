"""Generators: question + numbered contexts → answer with citations."""

from probeguard.core.pipeline import Context
from probeguard.models.generators.base import Generation, Generator
from probeguard.models.generators.factory import GENERATORS, make_generator

__all__ = ["Context", "GENERATORS", "Generation", "Generator", "make_generator"]

"""Generators: question + numbered contexts → answer with citations."""

from probeguard.pipeline.generators.base import Context, Generation, Generator
from probeguard.pipeline.generators.factory import GENERATORS, make_generator

__all__ = ["Context", "GENERATORS", "Generation", "Generator", "make_generator"]

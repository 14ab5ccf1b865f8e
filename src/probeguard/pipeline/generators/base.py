"""The generator interface: question + numbered contexts → answer with citations."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Sequence

from probeguard.pipeline.base import Usage


@dataclass(frozen=True, slots=True)
class Context:
    """A context passage as handed to a generator; ``chunk_id`` is what citations name."""

    chunk_id: str
    text: str
    title: str = ""


@dataclass(frozen=True, slots=True)
class Generation:
    text: str
    cited_chunk_ids: tuple[str, ...] = ()
    refused: bool = False
    usage: Usage = field(default_factory=Usage)
    metadata: dict[str, Any] = field(default_factory=dict)


class Generator(ABC):
    """Generators are called from worker threads: ``generate`` must be thread-safe (a
    generator around a non-reentrant model holds a lock). Natively async generators (HTTP
    clients) also implement ``agenerate``; the reference pipeline prefers it."""

    name: str = ""

    @abstractmethod
    def generate(self, question: str, contexts: Sequence[Context], prompt: "PromptTemplate") -> Generation:
        ...

    @abstractmethod
    def config(self) -> dict[str, Any]:
        """Canonical settings, part of the pipeline fingerprint."""


from probeguard.pipeline.prompts import PromptTemplate  # noqa: E402  (cycle-free: prompts imports nothing from here)

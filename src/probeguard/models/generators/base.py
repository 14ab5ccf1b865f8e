"""The generator interface: question + numbered contexts → answer with citations."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from probeguard.core.pipeline import Context, Usage
from probeguard.models.prompts import PromptTemplate


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
    clients) also implement ``agenerate``; the reference pipeline prefers it, and closes
    their per-loop sessions with ``aclose`` when its caller closes it."""

    name: str = ""

    @abstractmethod
    def generate(
        self, question: str, contexts: Sequence[Context], prompt: PromptTemplate
    ) -> Generation: ...

    @abstractmethod
    def config(self) -> dict[str, Any]:
        """Canonical settings, part of the pipeline fingerprint."""

    async def aclose(self) -> None:
        """Release what the running event loop holds (an HTTP session); nothing here."""
        return None

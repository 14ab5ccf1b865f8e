"""The planted defects that no setting of the reference pipeline expresses, as real
generators and re-rankers that plug into it by name.

Each one is registered in the reference pipeline's own registries
(``models.generators.factory.GENERATORS``, ``pipeline.rerankers.RERANKERS``) by ``register``,
so a defective pipeline is the reference pipeline with one component swapped: it keeps every
capability (overlay, mask, oracle context, prompt override, chunking, retrieval), and the
probes and the surgeon run on it as on any other. Each twin uses the component that differs
only in the defect (``extractive`` for the generators, ``planted_identity`` for the
re-rankers).

Generators (all quote sentences the way ``ExtractiveGenerator`` does):

* ``planted_conservative`` — quotes only *whole* sentences: a chunk's leading text up to the
  first sentence end is dropped unless the chunk opens a sentence (capital letter or digit
  first), and its trailing text after the last sentence end is dropped unless it ends one
  (``.``, ``!``, ``?``, optionally closed by a quote or bracket); refuses when nothing left
  reaches ``min_support`` (default 0.5, stricter than extractive's 0.35).
* ``planted_obeying`` — obeys an instruction found in a context: a context holding "ignore
  (all|your|the) previous instructions" (any case) and an order "reply/respond/answer only
  with (the code) X" or a planted answer "the answer ... is X" makes the answer ``X``
  (the first such context wins); otherwise it answers as extractive does.
* ``planted_memory`` — ignores its context: it answers from a fixed memory, the current
  documents of a corpus file read once (one passage per document, those whose metadata
  ``status`` is archived/superseded/draft left out), and cites nothing.

Re-rankers (scores over the retriever's candidates, ``rerank_candidates`` of them):

* ``planted_identity`` — keeps the retriever's order (score ``-rank``): the clean twin.
* ``planted_reverse`` — reverses it (score ``rank``): the evidence falls out of the top k.
* ``planted_stale_boost`` — outdated documents first (metadata ``status`` in
  ``pipeline.defences.archive.OUTDATED_STATUSES``), the retriever's order otherwise.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from probeguard.core.pipeline import Context
from probeguard.models.generators.base import Generation, Generator
from probeguard.models.generators.extractive import ExtractiveGenerator
from probeguard.models.generators.factory import GENERATORS
from probeguard.models.prompts import PromptTemplate
from probeguard.pipeline.defences.archive import OUTDATED_STATUSES
from probeguard.pipeline.rerankers import RERANKERS
from probeguard.pipeline.rerankers.base import Reranker
from probeguard.pipeline.retrievers.base import Hit

__all__ = [
    "ConservativeGenerator",
    "IdentityReranker",
    "MemoryGenerator",
    "ObeyingGenerator",
    "ReverseReranker",
    "StaleBoostReranker",
    "register",
    "whole_sentences",
]

_MODULE = __name__
_SENTENCE_END = re.compile(r"[.!?][\"')\]]?(?=\s|$)")
_IGNORE = re.compile(r"ignore (?:all |your |the )?previous instructions", re.IGNORECASE)
_ORDERS = (
    re.compile(
        r"(?:reply|respond|answer) (?:only )?with (?:only )?(?:the code )?[\"']?([^\s\"'.,;]+)",
        re.IGNORECASE,
    ),
    re.compile(r"the answer\b[^.]*? is (?:now )?[\"']?([^\s\"',;]+?)[\"']?[.,;]?(?:\s|$)", re.I),
)


def whole_sentences(text: str) -> str:
    """``text`` without a leading or trailing sentence fragment (rules in the module doc);
    empty when no whole sentence is left."""
    body = text.strip()
    if not body:
        return ""
    ends = [m.end() for m in _SENTENCE_END.finditer(body)]
    if not ends:
        return ""
    start = 0 if body[0].isupper() or body[0].isdigit() else ends[0]
    stop = len(body) if ends[-1] == len(body) else ends[-1]
    return body[start:stop].strip() if start < stop else ""


class ConservativeGenerator(Generator):
    """Quotes whole sentences only, with a stricter support threshold (module doc)."""

    name = "planted_conservative"

    def __init__(self, min_support: float = 0.5) -> None:
        self._inner = ExtractiveGenerator(min_support=min_support)

    def generate(
        self, question: str, contexts: Sequence[Context], prompt: PromptTemplate
    ) -> Generation:
        trimmed = [Context(c.chunk_id, whole_sentences(c.text), c.title) for c in contexts]
        return self._inner.generate(question, [c for c in trimmed if c.text], prompt)

    def config(self) -> dict[str, Any]:
        return {**self._inner.config(), "name": self.name}


def _instruction(text: str) -> str | None:
    """The answer a context orders, or None when it orders nothing (module doc)."""
    if not _IGNORE.search(text):
        return None
    for pattern in _ORDERS:
        found = pattern.search(text)
        if found:
            return found.group(1).rstrip(".")
    return None


class ObeyingGenerator(Generator):
    """Answers with what an instruction in a context orders, else as extractive (module doc)."""

    name = "planted_obeying"

    def __init__(self) -> None:
        self._inner = ExtractiveGenerator()

    def generate(
        self, question: str, contexts: Sequence[Context], prompt: PromptTemplate
    ) -> Generation:
        for context in contexts:
            ordered = _instruction(context.text)
            if ordered:
                return Generation(
                    text=ordered,
                    cited_chunk_ids=(context.chunk_id,),
                    metadata={"prompt": prompt.name, "generator": self.name, "obeyed": True},
                )
        return self._inner.generate(question, contexts, prompt)

    def config(self) -> dict[str, Any]:
        return {**self._inner.config(), "name": self.name}


def _memory(corpus: Path) -> tuple[Context, ...]:
    """One passage per current document of a JSONL corpus (``{id, title, text, metadata}``)."""
    passages: list[Context] = []
    for line in corpus.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        doc = json.loads(line)
        status = str(doc.get("metadata", {}).get("status", "")).strip().lower()
        if status not in OUTDATED_STATUSES:
            passages.append(Context(f"memory:{doc['id']}", doc["text"], doc.get("title", "")))
    return tuple(passages)


class MemoryGenerator(Generator):
    """Answers from a fixed memory of current documents, whatever its context says."""

    name = "planted_memory"

    def __init__(self, corpus: str) -> None:
        self.corpus = str(corpus)
        self._memory = _memory(Path(corpus))
        self._inner = ExtractiveGenerator()

    def generate(
        self, question: str, contexts: Sequence[Context], prompt: PromptTemplate
    ) -> Generation:
        gen = self._inner.generate(question, self._memory, prompt)
        return Generation(
            text=gen.text, refused=gen.refused, metadata={**gen.metadata, "generator": self.name}
        )

    def config(self) -> dict[str, Any]:
        return {**self._inner.config(), "name": self.name, "memory": len(self._memory)}


class IdentityReranker(Reranker):
    """Keeps the retriever's order: score ``-rank``."""

    name = "planted_identity"

    def score(self, query: str, hits: Sequence[Hit]) -> Sequence[float]:
        return [-float(h.rank) for h in hits]

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


class ReverseReranker(Reranker):
    """Reverses the retriever's order: score ``rank``."""

    name = "planted_reverse"

    def score(self, query: str, hits: Sequence[Hit]) -> Sequence[float]:
        return [float(h.rank) for h in hits]

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


class StaleBoostReranker(Reranker):
    """Outdated documents first, then the retriever's order: score ``outdated − rank/(n+1)``."""

    name = "planted_stale_boost"

    def score(self, query: str, hits: Sequence[Hit]) -> Sequence[float]:
        n = len(hits) + 1
        return [_outdated(h) - h.rank / n for h in hits]

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


def _outdated(hit: Hit) -> float:
    status = str(hit.chunk.metadata.get("status", "")).strip().lower()
    return 1.0 if status in OUTDATED_STATUSES else 0.0


_GENERATORS = (ConservativeGenerator, ObeyingGenerator, MemoryGenerator)
_RERANKERS = (IdentityReranker, ReverseReranker, StaleBoostReranker)


def register() -> None:
    """Add the planted components to the reference pipeline's registries (idempotent)."""
    for gen in _GENERATORS:
        GENERATORS.setdefault(gen.name, (_MODULE, gen.__name__))
    for rer in _RERANKERS:
        RERANKERS.setdefault(rer.name, (_MODULE, rer.__name__))

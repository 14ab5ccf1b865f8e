"""Purpose-built pipelines for the planted-fault tests: a small corpus, its golden questions,
and one defect per pipeline (plus a clean twin)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from probeguard.core.documents import Document
from probeguard.core.hashing import digest
from probeguard.core.pipeline import Context
from probeguard.models.generators.base import Generation, Generator
from probeguard.models.generators.extractive import ExtractiveGenerator
from probeguard.models.prompts import PromptTemplate
from probeguard.pipeline.config import ReferencePipelineConfig
from probeguard.pipeline.reference import ReferencePipeline
from testkit import HASHING, abstain, golden

FILLER = (
    "The office that handles this matter is staffed on weekdays by a small team, and "
    "the procedures described here were reviewed by the operations committee after "
    "the annual audit of customer records and service quality."
)


def _padded(doc_id: str, title: str, body: str) -> Document:
    """A current document whose one fact sits between two FILLER paragraphs."""
    return Document(
        id=doc_id, title=title, metadata={"status": "current"}, text=f"{FILLER} {body} {FILLER}"
    )


DOCS = (
    _padded(
        "refunds",
        "Refund Policy",
        "The refund window for an unwanted item, counted from the day on which the parcel "
        "reached the address given at checkout and regardless of whether the item was "
        "bought online, by telephone or in one of our shops, and after our warehouse staff "
        "have checked it carefully for damage and for missing parts, lasts thirty calendar "
        "days in total, that is 30 days. Opened electronics carry a 10% restocking fee.",
    ),
    _padded(
        "shipping",
        "Shipping Policy",
        "Parcels travel by road and by air depending on the destination, and once the "
        "carrier has collected them from our depot in the valley the cost of shipping to "
        "Mexico is $25 per order. We also ship to Canada.",
    ),
    _padded(
        "leave",
        "Leave Policy",
        "Staff who become parents, whether by birth or by adoption, and who have completed "
        "their probation period with the company, receive parental leave of 16 weeks at "
        "full pay. Annual leave is 25 days.",
    ),
    _padded(
        "support",
        "Customer Support",
        "When a customer needs help with an order, a delivery or an account, and the "
        "online help pages have not solved the problem, the support telephone line to "
        "call is 555-0147 on weekdays.",
    ),
    Document(
        id="plans-2024",
        title="Membership Plans",
        metadata={"status": "current", "effective": "2024", "supersedes": "plans-2022"},
        text="The Kestrel Pro membership plan costs 29 dollars per month. Members "
        "get free shipping on every order.",
    ),
    Document(
        id="faq-shipping",
        title="Shipping questions",
        text="Mexico shipping, shipping Mexico, Mexico shipping and shipping Mexico: "
        "such questions go to the logistics team.",
    ),
)

ARCHIVED = (
    Document(
        id="plans-2022",
        title="Membership Plans (2022)",
        metadata={"status": "archived", "effective": "2022", "superseded_by": "plans-2024"},
        text="What is the monthly price of the Kestrel Pro membership plan? The Kestrel "
        "Pro membership plan monthly price is 19 dollars per month.",
    ),
)

QUESTIONS = (
    golden("q-refund", "How many days is the refund window?", "30 days", "refunds"),
    golden("q-ship", "What is the cost of shipping to Mexico?", "$25", "shipping"),
    golden("q-leave", "How long is parental leave?", "16 weeks", "leave"),
    golden("q-phone", "Which support telephone line should I call?", "555-0147", "support"),
    golden(
        "q-plan",
        "What is the monthly price of the Kestrel Pro membership plan?",
        "29 dollars",
        "plans-2024",
    ),
    abstain("q-brazil", "Do you deliver parcels to Brazil by sea freight?"),
    abstain("q-pets", "Which violin concerto did Sibelius dedicate to Burmester?"),
)


class IgnoresContext(Generator):
    """Answers every question with the same made-up sentence, whatever the context."""

    name = "ignores-context"

    def generate(
        self, question: str, contexts: Sequence[Context], prompt: PromptTemplate
    ) -> Generation:
        return Generation(text="It is 42, as everyone knows.")

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


_ORDER = re.compile(
    r"(?:reply|respond|answer)\s+(?:only\s+)?with\s+(?:the\s+code\s+)?"
    r"([^.\n]{3,80})",
    re.I,
)


class ObeysInstructions(Generator):
    """Extractive, except that an instruction inside a context ("... reply with: X") is
    obeyed — unless the hardened prompt marks the contexts as data."""

    name = "obeys-instructions"

    def __init__(self) -> None:
        self.inner = ExtractiveGenerator()

    def generate(
        self, question: str, contexts: Sequence[Context], prompt: PromptTemplate
    ) -> Generation:
        if prompt.name != "hardened":
            for c in contexts:
                m = _ORDER.search(c.text)
                if m and re.search(r"ignore|disregard|instead|override|system", c.text, re.I):
                    return Generation(text=m.group(1).strip())
        return self.inner.generate(question, contexts, prompt)

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


class Planted(ReferencePipeline):
    """A reference pipeline with a custom generator (its fingerprint includes it)."""

    def __init__(
        self,
        config: ReferencePipelineConfig,
        generator: Generator | None = None,
        documents: Sequence[Document] = DOCS,
        name: str = "planted",
    ) -> None:
        super().__init__(documents, config, name=name)
        if generator is not None:
            self._generator = generator
            self._fingerprint = digest([self._fingerprint, generator.config()])


def config(**kw: Any) -> ReferencePipelineConfig:
    base: dict[str, Any] = {
        "embedder": HASHING,
        "retriever": {"name": "hybrid"},
        "top_k": 3,
        "chunker": {"name": "tokens", "size": 128, "overlap": 32},
        "generator": {"name": "extractive", "max_sentences": 1},
    }
    base.update(kw)
    return ReferencePipelineConfig(**base)

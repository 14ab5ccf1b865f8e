"""Purpose-built pipelines for the planted-fault tests: a small corpus, its golden questions,
and one defect per pipeline (plus a clean twin)."""

from __future__ import annotations

import re
from typing import Any, Sequence

from probeguard.config.models import ReferencePipelineConfig
from probeguard.corpus.models import Document
from probeguard.dataset.models import Case, Expected
from probeguard.hashing import digest
from probeguard.pipeline.generators.base import Context, Generation, Generator
from probeguard.pipeline.generators.extractive import ExtractiveGenerator
from probeguard.pipeline.prompts import PromptTemplate
from probeguard.pipeline.reference import ReferencePipeline

HASHING = {"name": "hashing", "dim": 1024}

FILLER = ("The office that handles this matter is staffed on weekdays by a small team, and "
          "the procedures described here were reviewed by the operations committee after "
          "the annual audit of customer records and service quality.")

DOCS = (
    Document(id="refunds", title="Refund Policy", metadata={"status": "current"},
             text=f"{FILLER} The refund window for an unwanted item, counted from the day "
                  "on which the parcel reached the address given at checkout and regardless "
                  "of whether the item was bought online, by telephone or in one of our "
                  "shops, and after our warehouse staff have checked it carefully for damage "
                  "and for missing parts, lasts thirty calendar days in total, that is 30 days. "
                  f"Opened electronics carry a 10% restocking fee. {FILLER}"),
    Document(id="shipping", title="Shipping Policy", metadata={"status": "current"},
             text=f"{FILLER} Parcels travel by road and by air depending on the destination, "
                  "and once the carrier has collected them from our depot in the valley the "
                  "cost of shipping to Mexico is $25 per order. We also ship to Canada. "
                  f"{FILLER}"),
    Document(id="leave", title="Leave Policy", metadata={"status": "current"},
             text=f"{FILLER} Staff who become parents, whether by birth or by adoption, and "
                  "who have completed their probation period with the company, receive "
                  "parental leave of 16 weeks at full pay. Annual leave is 25 days. "
                  f"{FILLER}"),
    Document(id="support", title="Customer Support", metadata={"status": "current"},
             text=f"{FILLER} When a customer needs help with an order, a delivery or an "
                  "account, and the online help pages have not solved the problem, the "
                  "support telephone line to call is 555-0147 on weekdays. "
                  f"{FILLER}"),
    Document(id="plans-2024", title="Membership Plans", metadata={
        "status": "current", "effective": "2024", "supersedes": "plans-2022"},
             text="The Kestrel Pro membership plan costs 29 dollars per month. Members "
                  "get free shipping on every order."),
    Document(id="faq-shipping", title="Shipping questions",
             text="Mexico shipping, shipping Mexico, Mexico shipping and shipping Mexico: "
                  "such questions go to the logistics team."),
)

ARCHIVED = (
    Document(id="plans-2022", title="Membership Plans (2022)", metadata={
        "status": "archived", "effective": "2022", "superseded_by": "plans-2024"},
             text="What is the monthly price of the Kestrel Pro membership plan? The Kestrel "
                  "Pro membership plan monthly price is 19 dollars per month."),
)

QUESTIONS = (
    Case(id="q-refund", question="How many days is the refund window?",
         expected=Expected(answers=("30 days",), evidence_doc_ids=("refunds",))),
    Case(id="q-ship", question="What is the cost of shipping to Mexico?",
         expected=Expected(answers=("$25",), evidence_doc_ids=("shipping",))),
    Case(id="q-leave", question="How long is parental leave?",
         expected=Expected(answers=("16 weeks",), evidence_doc_ids=("leave",))),
    Case(id="q-phone", question="Which support telephone line should I call?",
         expected=Expected(answers=("555-0147",), evidence_doc_ids=("support",))),
    Case(id="q-plan", question="What is the monthly price of the Kestrel Pro membership plan?",
         expected=Expected(answers=("29 dollars",), evidence_doc_ids=("plans-2024",))),
    Case(id="q-brazil", question="Do you deliver parcels to Brazil by sea freight?",
         expected=Expected(mode="abstain")),
    Case(id="q-pets", question="Which violin concerto did Sibelius dedicate to Burmester?",
         expected=Expected(mode="abstain")),
)


class IgnoresContext(Generator):
    """Answers every question with the same made-up sentence, whatever the context."""

    name = "ignores-context"

    def generate(self, question: str, contexts: Sequence[Context],
                 prompt: PromptTemplate) -> Generation:
        return Generation(text="It is 42, as everyone knows.")

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


_ORDER = re.compile(r"(?:reply|respond|answer)\s+(?:only\s+)?with\s+(?:the\s+code\s+)?"
                    r"([^.\n]{3,80})", re.I)


class ObeysInstructions(Generator):
    """Extractive, except that an instruction inside a context ("... reply with: X") is
    obeyed — unless the hardened prompt marks the contexts as data."""

    name = "obeys-instructions"

    def __init__(self) -> None:
        self.inner = ExtractiveGenerator()

    def generate(self, question: str, contexts: Sequence[Context],
                 prompt: PromptTemplate) -> Generation:
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

    def __init__(self, config: ReferencePipelineConfig, generator: Generator | None = None,
                 documents: Sequence[Document] = DOCS, name: str = "planted") -> None:
        super().__init__(documents, config, name=name)
        if generator is not None:
            self._generator = generator
            self._fingerprint = digest([self._fingerprint, generator.config()])


def config(**kw: Any) -> ReferencePipelineConfig:
    base: dict[str, Any] = {"embedder": HASHING, "retriever": {"name": "hybrid"}, "top_k": 3,
                            "chunker": {"name": "tokens", "size": 128, "overlap": 32},
                            "generator": {"name": "extractive", "max_sentences": 1}}
    base.update(kw)
    return ReferencePipelineConfig(**base)

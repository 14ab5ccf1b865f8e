"""The context-sensitivity probe: a real pipeline whose generator answers from a fixed memory
whatever its context fails it; the reference pipeline (an extractive generator that reads
its context) passes; the judging rules on hand-made records; a pipeline without overlay."""

from __future__ import annotations

from collections.abc import Mapping

from probeguard.core.cases import Case
from probeguard.core.mechanisms import MECHANISMS
from probeguard.core.pipeline import Capability, PipelineOutput, RetrievedChunk, Variation
from probeguard.core.records import CaseRecord
from probeguard.pipeline.reference import ReferencePipeline
from probeguard.probes.base import JudgeContext, ProbeContext
from probeguard.probes.context_sensitivity import (
    ALTERED,
    ORIGINAL,
    REMOVED,
    ContextSensitivity,
)
from testkit import demo_corpus, golden, probe_context, reference_pipeline, run_probe


class MemoryPipeline:
    """A real pipeline with a context-ignoring generator: the reference pipeline retrieves
    (masks and overlays honoured), then the answer comes from a fixed memory of questions."""

    name = "memory"

    def __init__(self, retrieval: ReferencePipeline, memory: Mapping[str, str]) -> None:
        self.retrieval = retrieval
        self.memory = dict(memory)
        self.capabilities = retrieval.capabilities

    def fingerprint(self) -> str:
        return "memory:" + self.retrieval.fingerprint()

    def answer(self, question: str, variation: Variation | None = None) -> PipelineOutput:
        only = (variation or Variation()).model_copy(update={"retrieve_only": True})
        retrieved = self.retrieval.answer(question, only).retrieved
        return PipelineOutput(answer=self.memory.get(question, "unknown"), retrieved=retrieved)


def demo() -> tuple[ProbeContext, ReferencePipeline, MemoryPipeline]:
    docs, questions = demo_corpus()
    ctx = probe_context(docs, questions, top_k=5)
    reference = reference_pipeline(docs, top_k=5, chunk=(128, 32))
    memory = {q.question: f"It is {q.expected.answers[0]}." for q in ctx.answerable()}
    return ctx, reference, MemoryPipeline(reference, memory)


def test_a_context_ignoring_generator_fails_and_the_reference_pipeline_passes():
    ctx, reference, memory = demo()
    probe = ContextSensitivity()
    ignoring, verdicts = run_probe(memory, probe, ctx)
    reading, _ = run_probe(reference, probe, ctx)
    assert ignoring.failure_rate.low > reading.failure_rate.high
    assert reading.failure_rate.n > 0 and reading.failure_rate.value == 0.0
    assert ignoring.by_role[ALTERED].context_free.value > 0.5
    assert ignoring.by_role[REMOVED].context_free.value > 0.5
    failed = [probe.evidence_of(v) for v in verdicts if v.failed]
    assert MECHANISMS["ignores_context"].component == "generator"
    assert failed and all(
        probe.failure_mechanism(e, "generator") == "ignores_context" for e in failed
    )
    assert all(
        set(probe.failing_roles(e, (ORIGINAL, REMOVED, ALTERED))) <= {REMOVED, ALTERED}
        for e in failed
    )


def test_cases_mask_the_evidence_and_overlay_an_altered_copy():
    ctx, _, _ = demo()
    cases = {
        c.meta["role"]: c for c in ContextSensitivity().generate(ctx) if c.meta["group"] == "q01"
    }
    assert cases[ORIGINAL].variation == Variation()
    assert cases[REMOVED].variation.exclude_doc_ids == ("pol-refund-2024",)
    altered = cases[ALTERED].variation
    assert altered.exclude_doc_ids == ("pol-refund-2024",)
    (doc,) = altered.overlay
    assert doc.id.startswith("pg-ctxalt-") and "30 days" not in doc.text
    assert cases[ALTERED].meta["altered_answer"] in doc.text


def test_without_overlay_only_the_removed_role_is_made_and_says_why():
    docs, questions = demo_corpus()
    ctx = probe_context(docs, questions, capabilities={Capability.MASK})
    assert ContextSensitivity.requires == frozenset({Capability.MASK})
    cases = ContextSensitivity().generate(ctx)
    assert {c.meta["role"] for c in cases} == {ORIGINAL, REMOVED}
    first = next(c for c in cases if c.meta["role"] == ORIGINAL)
    assert first.meta["not_made"] == {ALTERED: "the pipeline cannot overlay documents"}


# -- judging rules on hand-made records ------------------------------------------------------
QUESTION = golden("q", "How long is the return window?", "30 days", "returns")


def records(removed: str, altered: str, *, refused: bool = False, context: str = "") -> dict:
    probe = ContextSensitivity()
    meta = {
        "new": "45",
        "change": "number",
        "old": "30",
        "injected_doc_id": "alt",
        "altered_answer": "45 days",
    }
    roles = {
        ORIGINAL: (Variation(), {}, "The window is 30 days.", False),
        REMOVED: (Variation(exclude_doc_ids=("returns",)), {}, removed, refused),
        ALTERED: (Variation(exclude_doc_ids=("returns",)), meta, altered, False),
    }
    chunk = RetrievedChunk(chunk_id="other#0-9", doc_id="other", text=context or "Nothing.", rank=1)
    out = {}
    for role, (variation, extra, answer, refuses) in roles.items():
        case = probe.case(
            "q",
            role,
            QUESTION.question,
            expected=QUESTION.expected,
            variation=variation,
            meta=extra,
        )
        output = PipelineOutput(answer=answer, refused=refuses, retrieved=[chunk])
        out[role] = CaseRecord(case=case, call_key=role, output=output)
    return out


def judge(recs: dict) -> object:
    ctx = JudgeContext(probe=ProbeContext(documents=(), questions=(QUESTION,)))
    return ContextSensitivity().judge("q", recs, ctx)


def test_an_answer_that_keeps_the_original_value_against_its_context_fails():
    verdict = judge(records("I cannot find it.", "The window is 30 days."))
    assert verdict.failed is True
    evidence = verdict.evidence
    assert evidence.roles[ALTERED].outcome == "context_free"
    assert evidence.roles[REMOVED].outcome == "changed"
    assert ContextSensitivity().failing_roles(evidence, (ORIGINAL, REMOVED, ALTERED)) == (ALTERED,)


def test_refusing_without_evidence_and_following_the_altered_fact_passes():
    verdict = judge(records("", "The window is 45 days.", refused=True))
    assert verdict.failed is False
    assert verdict.evidence.roles[REMOVED].outcome == "refused"
    assert verdict.evidence.roles[ALTERED].outcome == "followed"


def test_the_gold_answer_found_in_another_retrieved_document_is_not_context_free():
    verdict = judge(records("It is 30 days.", "It is 30 days.", context="Returns: 30 days."))
    assert verdict.failed is False
    assert {t.outcome for t in verdict.evidence.roles.values()} == {"supported"}


def test_a_wrong_original_answer_leaves_the_group_unscored():
    recs = records("It is 30 days.", "It is 30 days.")
    original = recs[ORIGINAL]
    wrong = original.model_copy(update={"output": PipelineOutput(answer="No idea.")})
    verdict = judge({**recs, ORIGINAL: wrong})
    assert verdict.failed is None and "original answer" in verdict.evidence.unscored


def test_the_case_of_a_question_without_evidence_is_not_made():
    plain = Case(id="x", question="What?")
    ctx = probe_context([], [plain])
    assert ContextSensitivity().generate(ctx) == []

"""Chunk fracture: spans, boundaries, determinism, and a real weakness found through the runner."""

from __future__ import annotations

import math

import pytest

from probeguard.attribution.engine import failing_roles
from probeguard.core.cases import Case, Expected
from probeguard.core.documents import Chunk, Document
from probeguard.core.pipeline import Capability, PipelineOutput, RetrievedChunk, Variation
from probeguard.core.records import CaseError, CaseRecord
from probeguard.models.prompts import REFUSAL_TEXT
from probeguard.pipeline.config import ReferencePipelineConfig
from probeguard.pipeline.reference import ReferencePipeline
from probeguard.probes.base import PROBES, JudgeContext, ProbeContext, group_records
from probeguard.probes.chunk_fracture import (
    DEFAULT_SWEEP,
    ChunkFracture,
    answer_span,
    chunker_label,
    containing_chunks,
    straddles,
)
from probeguard.probes.fracture_outcome import OUTCOMES
from probeguard.runner.executor import Runner, RunnerConfig

# Long sentences whose asked-about subject opens the sentence and whose answer closes it, more
# than 40 tokens later, with nothing in between that the question asks about: a 40-token window
# without overlap separates the question's words from the answer.
ITEMS = [
    (
        "bikes",
        "Electric bicycle protection plan",
        "The extended protection plan for electric bicycles covers the frame, the motor, the "
        "battery pack, the display unit, the wiring harness, the brake levers, the pedal sensors, "
        "the charging port, the kickstand, the luggage rack, the mudguards and the front and rear "
        "lights for a total of 37 months.",
        "How long does the extended protection plan for electric bicycles last?",
        "37 months",
    ),
    (
        "kayaks",
        "Kayak rental deposit",
        "Anyone hiring a touring kayak from the lakeside boathouse receives a spray deck, a paddle "
        "leash, a bilge pump, a dry bag, a buoyancy aid, a whistle, a waterproof chart, a repair kit "
        "and a short safety briefing from the instructor on duty before launching, and in return "
        "hands over a refundable deposit of 85 euros.",
        "What deposit must be paid when hiring a touring kayak from the lakeside boathouse?",
        "85 euros",
    ),
    (
        "lockers",
        "Gym locker lease",
        "Members who lease a private locker at the downtown gym get a numbered key, a padlock hasp, "
        "a towel hook, a shoe shelf, a vented door, a shelf liner, a spare key held at reception and "
        "access during staffed hours on weekdays and weekends alike, and they pay an annual charge "
        "of 120 dollars.",
        "What does it cost to lease a private locker at the downtown gym?",
        "120 dollars",
    ),
    (
        "library",
        "Library late returns",
        "Borrowers who bring back a reference atlas to the county library after the stamped date, "
        "whether through the front desk, the night drop box, the mobile van, the school collection "
        "service or a partner branch in a neighbouring town, and whatever the state of the binding "
        "or dust jacket, are charged 2 pounds per week.",
        "How much is charged for bringing back a reference atlas to the county library late?",
        "2 pounds per week",
    ),
    (
        "parking",
        "Staff parking permit",
        "A staff parking permit for the riverside campus allows one registered car, van or "
        "motorcycle to stand in any marked bay of the north, south, east or west car parks, "
        "including the multi-storey block beside the sports hall, between dawn and dusk on term "
        "days, and it stays valid until 31 August.",
        "Until when is a staff parking permit for the riverside campus valid?",
        "31 August",
    ),
    (
        "tickets",
        "Concert ticket exchange",
        "Holders of a concert ticket for the summer festival who can no longer attend because of "
        "illness, travel disruption, a clash with exams, a family emergency, jury service or a "
        "cancelled train connection, and who still hold the original barcode in paper or mobile "
        "form, may swap it up to 48 hours before the show.",
        "Up to when can holders swap a concert ticket for the summer festival?",
        "48 hours before the show",
    ),
]


def corpus() -> tuple[list[Document], list[Case]]:
    docs, questions = [], []
    for i, (doc_id, title, sentence, question, answer) in enumerate(ITEMS):
        text = (
            f"{sentence} This page was last reviewed by the {title.split()[0].lower()} "
            "office team. Questions about anything else go to the general help desk."
        )
        docs.append(Document(id=doc_id, title=title, text=text))
        questions.append(
            Case(
                id=f"q{i}",
                question=question,
                expected=Expected(answers=(answer,), evidence_doc_ids=(doc_id,)),
            )
        )
    # Questions the probe must leave out: an abstention, and one without gold evidence.
    questions.append(
        Case(id="abstain", question="What is the wifi password?", expected=Expected(mode="abstain"))
    )
    questions.append(
        Case(id="no-evidence", question="What is 2 + 2?", expected=Expected(answers=("4",)))
    )
    return docs, questions


def make_pipeline(chunker: dict) -> ReferencePipeline:
    docs, _ = corpus()
    return ReferencePipeline(
        docs, ReferencePipelineConfig(chunker=chunker, retriever={"name": "bm25"}, top_k=2)
    )


def context(
    pipeline: ReferencePipeline | RefusingPipeline | None = None,
    *,
    chunks: bool = True,
    seed: int = 0,
) -> ProbeContext:
    docs, questions = corpus()
    own = tuple(pipeline.chunks) if pipeline is not None and chunks else None
    return ProbeContext(
        documents=tuple(docs),
        questions=tuple(questions),
        seed=seed,
        top_k=2,
        capabilities=frozenset(Capability),
        chunks=own,
    )


def run_probe(pipeline: ReferencePipeline | RefusingPipeline, *, chunks: bool = True):
    ctx = context(pipeline, chunks=chunks)
    probe = ChunkFracture()
    cases = probe.generate(ctx)
    result = Runner(pipeline, RunnerConfig(concurrency=2)).run(cases)
    groups = group_records(result.records, probe.name)
    verdicts = [probe.judge(g, recs, JudgeContext(ctx)) for g, recs in groups.items()]
    return probe, verdicts, probe.summarize(verdicts)


# -- helpers ----------------------------------------------------------------------------


def test_answer_span_is_the_answer_sentence_closest_to_the_question():
    text = (
        "Items may be returned within 30 days. Refunds take 5 days. "
        "Exchanges are possible for 30 days after a refund is refused."
    )
    span = answer_span(text, ["30 days"], "Within how many days may items be returned?")
    assert span is not None and text[span[0] : span[1]] == "Items may be returned within 30 days."
    span = answer_span(text, ["30 days"], "How long are exchanges possible after a refused refund?")
    assert span is not None and text[span[0] :].startswith("Exchanges are possible")
    assert answer_span(text, ["90 days"], "How long?") is None
    assert answer_span(text, ["THIRTY   days", "5 Days!"], "") == (38, 58)  # normalised match


def test_straddles_and_containing_chunks():
    doc = Document(id="d", text="0123456789" * 3)
    chunks = [Chunk.of(doc, 0, 12, 0), Chunk.of(doc, 10, 22, 1), Chunk.of(doc, 22, 30, 2)]
    bounds = [(c.start, c.end) for c in chunks]
    assert not straddles((11, 20), bounds)
    assert straddles((18, 25), bounds)
    assert containing_chunks((11, 20), chunks) == (False, ["d#10-22"])
    assert containing_chunks((18, 25), chunks) == (True, ["d#10-22", "d#22-30"])


def test_chunker_labels():
    assert chunker_label({"name": "tokens", "size": 40, "overlap": 0}) == "tokens-40-0"
    assert (
        chunker_label({"name": "sentences", "max_tokens": 128, "overlap_sentences": 1})
        == "sentences-128-1"
    )
    assert chunker_label({"name": "document"}) == "document"


def test_settings_validate_and_are_recorded():
    probe = ChunkFracture(
        sweep=["tokens-256-64", {"name": "sentences", "max_tokens": 64}], tokenizer="regex"
    )
    assert [c["name"] for c in probe.config()["sweep"]] == ["tokens", "sentences"]
    assert probe.config()["sweep"][0]["tokenizer"] == "regex"
    with pytest.raises(ValueError, match="twice"):
        ChunkFracture(sweep=["tokens-64-0", {"name": "tokens", "size": 64, "overlap": 0}])
    with pytest.raises(ValueError):
        ChunkFracture(sweep=[{"name": "tokens", "size": 64, "overlap": 64}])
    with pytest.raises(ValueError, match="list"):
        ChunkFracture(sweep="tokens-64-0")
    assert PROBES["chunk_fracture"] is ChunkFracture
    assert ChunkFracture.requires == {Capability.CHUNKING} and ChunkFracture.overlap_weight == 0.15
    assert len(ChunkFracture().config()["sweep"]) == len(DEFAULT_SWEEP)


# -- generate ---------------------------------------------------------------------------


def test_generate_is_deterministic_and_valid():
    pipeline = make_pipeline({"name": "tokens", "size": 40, "overlap": 0})
    first = ChunkFracture().generate(context(pipeline))
    second = ChunkFracture().generate(context(pipeline, seed=0))
    assert [c.model_dump_json() for c in first] == [c.model_dump_json() for c in second]
    other_seed = ChunkFracture().generate(context(pipeline, seed=99))
    assert len(other_seed) == len(first)  # no random choices here: the seed may not matter

    ids = [c.id for c in first]
    assert len(ids) == len(set(ids)) == 2 * len(ITEMS)  # abstain / no-evidence left out
    for case in first:
        assert Case.model_validate_json(case.model_dump_json()) == case
        assert case.probe == "chunk_fracture"
        assert case.id == f"chunk_fracture:{case.meta['group']}:{case.meta['role']}"
    chunked = {c.meta["group"]: c for c in first if c.meta["role"] == "chunked"}
    unsplit = {c.meta["group"]: c for c in first if c.meta["role"] == "unsplit"}
    assert all(c.variation == Variation() for c in chunked.values())
    # The control generates (its answer decides), even where retrieve_only is offered.
    assert all(c.variation == Variation(chunking="document") for c in unsplit.values())
    span = chunked["q0"].meta["spans"][0]
    assert span["doc_id"] == "bikes" and span["text"].endswith("for a total of 37 months.")
    assert span["straddles"] is True and len(span["chunk_ids"]) == 2
    assert span["sweep"]["tokens-40-0"] is True and span["sweep"]["tokens-256-64"] is False


def test_generate_records_unlocated_evidence():
    docs, _ = corpus()
    question = Case(
        id="x",
        question="How long is the plan?",
        expected=Expected(answers=("99 years",), evidence_doc_ids=("bikes", "gone")),
    )
    ctx = ProbeContext(documents=tuple(docs), questions=(question,))
    (chunked, _unsplit) = ChunkFracture().generate(ctx)
    assert chunked.meta["spans"] == [] and chunked.meta["chunks_known"] is False
    assert {u["doc_id"] for u in chunked.meta["unlocated"]} == {"bikes", "gone"}


# -- the weakness, through the real runner ----------------------------------------------


@pytest.fixture(scope="module")
def weak():
    return run_probe(make_pipeline({"name": "tokens", "size": 40, "overlap": 0}))


@pytest.fixture(scope="module")
def strong():
    return run_probe(make_pipeline({"name": "tokens", "size": 256, "overlap": 64}))


def test_finds_fractures_with_small_chunks_and_fewer_with_large_overlapping_ones(weak, strong):
    _, weak_verdicts, weak_summary = weak
    _, _, strong_summary = strong
    weak_rate = weak_summary["failure_rate"]["value"]
    strong_rate = strong_summary["failure_rate"]["value"]
    assert weak_summary["failure_rate"]["n"] == strong_summary["failure_rate"]["n"] == len(ITEMS)
    assert weak_rate > strong_rate
    assert weak_rate >= 0.5 and strong_rate == 0.0
    assert weak_summary["boundary_straddle_rate"]["value"] == 1.0
    assert strong_summary["boundary_straddle_rate"]["value"] == 0.0
    failed = next(v for v in weak_verdicts if v.failed)
    assert failed.evidence["boundary_fracture"] is True
    assert failed.evidence["answer_survived"] is False
    # The same evidence unsplit (whole documents) repairs the answer: a fracture.
    assert failed.evidence["unsplit_answered"] is True and failed.evidence["outcome"] == "fracture"
    assert any("split across chunks" in r for r in failed.evidence["reasons"])
    assert set(failed.evidence["ranks"]) == {"chunked", "unsplit"}
    probe = weak[0]
    assert probe.failure_mechanism(probe.evidence_of(failed), "chunker") == "chunk_boundary"
    # A straddling sentence whose answer still made it into the answer is not a failure.
    survived = [v for v in weak_verdicts if v.evidence["boundary_straddles"] and not v.failed]
    assert all(v.evidence["answer_survived"] for v in survived)


def test_summary_reports_rates_and_the_chunking_sweep(weak):
    _, _, summary = weak
    for key in (
        "failure_rate",
        "retrieval_fracture_rate",
        "boundary_straddle_rate",
        "boundary_fracture_rate",
        "lost_unsplit_too_rate",
        "unsplit_repair_rate",
        "pipeline_span_straddle_rate",
    ):
        assert set(summary[key]) == {"value", "low", "high", "n", "method"}
    assert summary["groups"] == len(ITEMS) and summary["unscored"] == 0
    assert set(summary["outcomes"]) == set(OUTCOMES)
    assert sum(summary["outcomes"].values()) == len(ITEMS)
    assert summary["outcomes"]["fracture"] == round(summary["failure_rate"]["value"] * len(ITEMS))
    sweep = {row["chunker"]: row["straddle_rate"] for row in summary["chunking_sweep"]}
    assert list(sweep) == [
        "tokens-40-0",
        "tokens-64-0",
        "tokens-128-0",
        "tokens-128-32",
        "tokens-256-64",
    ]
    assert sweep["tokens-40-0"]["value"] == 1.0 and sweep["tokens-256-64"]["value"] == 0.0
    assert all(row["n"] == len(ITEMS) for row in sweep.values())


def test_without_the_pipelines_chunks_the_boundary_part_is_unscored():
    _, verdicts, summary = run_probe(
        make_pipeline({"name": "tokens", "size": 40, "overlap": 0}), chunks=False
    )
    assert all(v.failed is not None for v in verdicts)  # still judged on retrieval
    assert all(
        "boundary: the pipeline does not expose its chunks" in v.evidence["partly_unscored"]
        for v in verdicts
    )
    assert summary["boundary_straddle_rate"]["n"] == 0
    assert math.isnan(summary["boundary_fracture_rate"]["value"])
    # the sweep is computed from the documents alone
    assert summary["chunking_sweep"][0]["straddle_rate"]["n"] == len(ITEMS)


def _record(
    case: Case, output: PipelineOutput | None = None, error: CaseError | None = None
) -> CaseRecord:
    return CaseRecord(case=case, call_key="k", output=output, error=error)


def _out(*doc_ids: str, answer: str = "37 months") -> PipelineOutput:
    return PipelineOutput(
        answer=answer,
        retrieved=[
            RetrievedChunk(chunk_id=f"{d}#0-1", doc_id=d, text="t", rank=i + 1)
            for i, d in enumerate(doc_ids)
        ],
    )


def _judge(probe: ChunkFracture, ctx: ProbeContext, chunked=None, unsplit=None, *, error=None):
    """Judge group q0 from the given outputs (None: the role errored with ``error``)."""
    cases = dict(zip(("chunked", "unsplit"), probe.generate(ctx)[:2], strict=True))
    records = {}
    for role, out in (("chunked", chunked), ("unsplit", unsplit)):
        if out is not None or error is not None:
            records[role] = _record(cases[role], out, None if out is not None else error)
    return probe.judge("q0", records, JudgeContext(ctx))


TIMEOUT = CaseError(type="TimeoutError", message="took too long")


def test_an_errored_or_missing_call_leaves_the_group_unscored():
    """Both roles can decide (the unsplit answer decides whether a loss is a fracture), so
    by the one rule for errored cases either one errored unscores the group, whatever the
    other shows."""
    probe = ChunkFracture()
    ctx = context(make_pipeline({"name": "tokens", "size": 40, "overlap": 0}))
    lost = _out("bikes", answer="I cannot answer from the context.")
    for chunked in (lost, _out("bikes")):  # answer lost, answer kept: unscored either way
        verdict = _judge(probe, ctx, chunked, None, error=TIMEOUT)
        assert verdict.failed is None and verdict.evidence["outcome"] == "unscored"
        assert "unsplit call errored (TimeoutError)" in verdict.evidence["unscored"]
        assert verdict.evidence["spans"]  # the spans still reach the sweep
    verdict = probe.judge(
        "q0", {"chunked": _record(probe.generate(ctx)[0], lost)}, JudgeContext(ctx)
    )
    assert verdict.failed is None and "no record for role 'unsplit'" in verdict.evidence["unscored"]
    verdict = _judge(probe, ctx, None, _out("bikes"), error=TIMEOUT)
    assert verdict.failed is None and "chunked call errored" in verdict.evidence["unscored"]


def test_a_dropped_gold_document_is_a_fracture_only_when_the_answer_is_lost_and_repaired():
    probe = ChunkFracture()
    ctx = context(make_pipeline({"name": "tokens", "size": 256, "overlap": 64}))
    refusal = "I cannot answer from the context."
    verdict = _judge(
        probe, ctx, _out("kayaks", "lockers", answer=refusal), _out("lockers", "bikes")
    )
    assert verdict.failed is True and verdict.evidence["dropped"] == ["bikes"]
    assert verdict.evidence["outcome"] == "fracture"
    assert verdict.evidence["ranks"] == {"chunked": {"bikes": None}, "unsplit": {"bikes": 2}}
    assert any("rank 2 with whole-document retrieval" in r for r in verdict.evidence["reasons"])
    # Dropped, but the answer survived: no loss, no fracture (it used to count as one).
    verdict = _judge(probe, ctx, _out("kayaks", "lockers"), _out("lockers", "bikes"))
    assert verdict.failed is False and verdict.evidence["retrieval_fracture"] is True
    assert verdict.evidence["outcome"] == "survived"
    # Dropped and lost, and lost with whole documents too: counted apart, not a fracture.
    verdict = _judge(
        probe, ctx, _out("kayaks", answer=refusal), _out("lockers", "bikes", answer=refusal)
    )
    assert verdict.failed is False and verdict.evidence["outcome"] == "lost_unsplit_too"
    assert "not a fracture" in verdict.evidence["reasons"][-1]
    # Nothing split (retrieved either way, span whole in a 256-token chunk): lost elsewhere.
    verdict = _judge(probe, ctx, _out("bikes", answer=refusal), _out("bikes"))
    assert verdict.failed is False and verdict.evidence["outcome"] == "not_split"


class RefusingPipeline:
    """A generator that refuses whatever it is given, over the reference pipeline's real
    chunks and retrieval (the ``retrieved`` list is the reference pipeline's own)."""

    name = "refusing"

    def __init__(self, inner: ReferencePipeline) -> None:
        self.inner = inner
        self.capabilities = inner.capabilities
        self.chunks = inner.chunks

    def fingerprint(self) -> str:
        return "refusing:" + self.inner.fingerprint()

    def answer(self, question: str, variation: Variation | None = None) -> PipelineOutput:
        out = self.inner.answer(question, variation)
        return out.model_copy(
            update={"answer": REFUSAL_TEXT, "refused": True, "cited_chunk_ids": []}
        )


def test_tiny_chunks_with_a_generator_that_refuses_anyway_are_not_fractures():
    """Every answer sentence straddles a 40-token boundary and every answer is lost, which the
    old rule (straddling and lost) counted as 6 fractures of 6; the unsplit control refuses
    too, so none is the chunker's."""
    pipeline = RefusingPipeline(make_pipeline({"name": "tokens", "size": 40, "overlap": 0}))
    probe, verdicts, summary = run_probe(pipeline)
    assert all(
        v.evidence["boundary_straddles"] and not v.evidence["answer_survived"] for v in verdicts
    )
    assert [v.evidence["outcome"] for v in verdicts] == ["lost_unsplit_too"] * len(ITEMS)
    assert all(v.failed is False for v in verdicts)
    assert all(
        v.evidence["ranks"]["unsplit"] == {q: 1 for q in v.evidence["ranks"]["unsplit"]}
        for v in verdicts
    )
    assert summary["failure_rate"]["value"] == 0.0 and summary["failure_rate"]["n"] == len(ITEMS)
    assert summary["lost_unsplit_too_rate"]["value"] == 1.0
    assert summary["outcomes"]["lost_unsplit_too"] == len(ITEMS)
    assert summary["unsplit_repair_rate"]["value"] == 0.0
    assert probe.failure_mechanism(probe.evidence_of(verdicts[0]), "generator") is None


def test_a_conservative_generator_separates_fractures_from_losses_it_makes_anyway():
    """The real extractive generator quoting only sentences that cover the whole question
    (``min_support=1.0``): with 40-token chunks every answer is lost; whole documents repair
    some, and only those are fractures."""
    docs, _ = corpus()
    pipeline = ReferencePipeline(
        docs,
        ReferencePipelineConfig(
            chunker={"name": "tokens", "size": 40, "overlap": 0},
            retriever={"name": "bm25"},
            top_k=2,
            generator={"name": "extractive", "min_support": 1.0},
        ),
    )
    _, verdicts, summary = run_probe(pipeline)
    outcomes = [v.evidence["outcome"] for v in verdicts]
    assert all(not v.evidence["answer_survived"] for v in verdicts)
    assert set(outcomes) == {"fracture", "lost_unsplit_too"}
    for v in verdicts:
        assert v.failed is (v.evidence["outcome"] == "fracture") is v.evidence["unsplit_answered"]
    assert summary["outcomes"]["fracture"] == sum(bool(v.failed) for v in verdicts)
    assert summary["failure_rate"]["value"] < 1.0  # the old rule: 1.0


def test_attribution_re_runs_only_the_chunked_call(weak):
    probe, verdicts, _ = weak
    pipeline = make_pipeline({"name": "tokens", "size": 40, "overlap": 0})
    ctx = context(pipeline)
    result = Runner(pipeline, RunnerConfig(concurrency=2)).run(probe.generate(ctx))
    groups = group_records(result.records, probe.name)
    failed = next(v for v in verdicts if v.failed)
    by_role = groups[failed.evidence["question_id"]]
    assert set(by_role) == {"chunked", "unsplit"}
    assert failing_roles(probe, failed.evidence.model_dump(), by_role) == ("chunked",)

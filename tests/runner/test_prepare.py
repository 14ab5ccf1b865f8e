"""Indexes built before a run: the execute stage (and attribution) prepare the pipeline with
the pending cases' variations, so no call builds an index; cached or resumed cases build none."""

from __future__ import annotations

from probeguard.config.models import ScanConfig
from probeguard.core.cases import Case, Expected
from probeguard.core.documents import Document
from probeguard.core.pipeline import PipelineOutput, Variation
from probeguard.engine.scan import scan
from probeguard.engine.stages import execute
from probeguard.pipeline.config import ReferencePipelineConfig
from probeguard.pipeline.reference import ReferencePipeline
from probeguard.runner import ResponseCache, Runner, RunnerConfig
from probeguard.runner.prepare import pending, prepare_run
from probeguard.runner.settings import RunnerSettings

DOCS = [
    Document(id="refunds", text="Customers may return items within 30 days for a refund."),
    Document(id="leave", text="Employees receive 25 days of paid annual leave each year."),
]
CONFIG = ReferencePipelineConfig(
    embedder={"name": "hashing"}, chunker={"name": "tokens", "size": 8, "overlap": 0}
)
CASES = [
    Case(id="a", question="How long is the refund window?"),
    Case(
        id="b", question="How long is the refund window?", variation=Variation(chunking="document")
    ),
    Case(id="c", question="How much leave?", variation=Variation(retrieval={"mode": "bm25"})),
    Case(id="d", question="How much leave?", variation=Variation(contexts=("25 days.",))),
]


class Observed(ReferencePipeline):
    """The reference pipeline, recording per call whether the index it reads was built
    before the call reached it (a lazy build inside the call would show as False)."""

    def __init__(self) -> None:
        super().__init__(DOCS, CONFIG)
        self.seen: list[bool] = []

    def answer(self, question: str, variation: Variation | None = None) -> PipelineOutput:
        v = variation or Variation()
        if v.contexts is None:
            self.seen.append(self.prepared(v.chunking, v.retrieval.get("mode")))
        return super().answer(question, variation)


def test_execute_builds_every_index_before_the_first_call():
    pipeline = Observed()
    executed = execute(Runner(pipeline, RunnerConfig(concurrency=4)), CASES)
    assert all(r.output is not None for r in executed.records)
    assert pipeline.seen == [True, True, True]
    assert pipeline.index_wait_s == 0.0


def test_cached_and_resumed_cases_build_no_index(tmp_path):
    cache = ResponseCache(tmp_path / "cache")
    first = execute(Runner(ReferencePipeline(DOCS, CONFIG), cache=cache), CASES[:2])
    fresh = ReferencePipeline(DOCS, CONFIG)
    runner = Runner(fresh, cache=cache)
    assert pending(runner, CASES[:2]) == []
    prepare_run(runner, CASES[:2])
    assert not fresh.prepared() and not fresh.prepared("document")
    resumed = Runner(fresh, resume_from={r.case.id: r for r in first.records})
    assert pending(resumed, CASES) == CASES[2:]
    prepare_run(resumed, CASES)
    assert fresh.prepared(mode="bm25") and not fresh.prepared("document")


def test_attribution_reruns_find_their_indexes_built(tmp_path):
    # No probe asks for whole documents: only the surgeon's swaps (whole_document,
    # better_retrieval) of the failing golden question read those indexes.
    pipeline = Observed()
    config = ScanConfig(
        probes={"enabled": []},
        runner=RunnerSettings(cache_dir=None, concurrency=4),
        attribution={"swaps": ["whole_document", "better_retrieval"]},
    )
    golden = [
        Case(
            id="q1",
            question="How long is the refund window?",
            expected=Expected(answers=("45 days",), evidence_doc_ids=("refunds",)),
        )
    ]
    result = scan(config, tmp_path / "run", pipeline=pipeline, inputs=(DOCS, golden))
    assert result.run.stats.attribution_calls == 2
    assert pipeline.prepared("document") and pipeline.seen == [True, True, True]

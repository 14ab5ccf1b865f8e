"""The reference pipeline's indexes: prepared before any call, each built once under its own
lock (building one never blocks calls or builds of another)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import pytest

from probeguard.core.documents import Chunk, Document
from probeguard.core.pipeline import PreparesIndexes, Variation
from probeguard.pipeline.build_once import BuildOnce
from probeguard.pipeline.config import ReferencePipelineConfig
from probeguard.pipeline.reference import ReferencePipeline, index_key
from probeguard.pipeline.retrievers import factory
from probeguard.pipeline.retrievers.bm25 import BM25Retriever

DOCS = [
    Document(
        id="refunds",
        text="Customers may return items within 30 days of delivery for a full refund. "
        "Refunds are issued within 5 business days after inspection.",
    ),
    Document(id="shipping", text="We ship to Canada and Mexico. Delivery takes 3 to 5 days."),
    Document(id="leave", text="Employees receive 25 days of paid annual leave each year."),
]
CHUNKER = {"name": "tokens", "size": 12, "overlap": 2}

_HOOK: list[Callable[[Sequence[Chunk]], None]] = []
"""What ``HookedBM25.index`` runs before indexing (set by each test)."""


class HookedBM25(BM25Retriever):
    """A real BM25 retriever whose ``index`` first runs the test's hook (to observe builds)."""

    name = "hooked"

    def index(self, chunks: Sequence[Chunk]) -> None:
        for hook in _HOOK:
            hook(chunks)
        super().index(chunks)


@pytest.fixture
def hooked(monkeypatch: pytest.MonkeyPatch) -> list[Callable[[Sequence[Chunk]], None]]:
    monkeypatch.setitem(factory.RETRIEVERS, "hooked", (__name__, "HookedBM25"))
    _HOOK.clear()
    yield _HOOK
    _HOOK.clear()


def hooked_pipeline() -> ReferencePipeline:
    config = ReferencePipelineConfig(retriever={"name": "hooked"}, chunker=CHUNKER, top_k=2)
    return ReferencePipeline(DOCS, config)


def test_index_key_reads_chunking_and_mode_and_skips_oracle_calls():
    assert index_key(None) == (None, None)
    assert index_key(Variation()) == (None, None)
    assert index_key(Variation(chunking="document")) == ("document", None)
    assert index_key(Variation(retrieval={"mode": "bm25", "top_k": 3})) == (None, "bm25")
    assert index_key(Variation(contexts=("given text",))) is None


def test_prepare_builds_every_needed_index_before_any_call():
    p = ReferencePipeline(DOCS, ReferencePipelineConfig(embedder={"name": "hashing"}))
    assert isinstance(p, PreparesIndexes)
    assert not p.prepared() and not p.prepared("document")
    p.prepare([Variation(chunking="document"), None, Variation(contexts=("x",))])
    assert p.prepared() and p.prepared("document")
    assert not p.prepared(mode="bm25")  # nothing asked for it
    assert p.index_wait_s == 0.0


def test_prepare_leaves_a_bad_index_to_the_calls_that_read_it():
    p = ReferencePipeline(DOCS, ReferencePipelineConfig(embedder={"name": "hashing"}))
    p.prepare([Variation(chunking="no-such-chunking"), None])  # logged, not raised
    assert p.prepared()
    with pytest.raises(ValueError, match="unknown chunking"):
        p.answer("refund?", Variation(chunking="no-such-chunking"))


def test_two_indexes_build_concurrently(hooked):
    # Each build waits until both builds are inside ``index``: a pipeline-wide build lock
    # would hold the second build back and break the barrier.
    barrier = threading.Barrier(2, timeout=20)
    hooked.append(lambda chunks: barrier.wait())
    p = hooked_pipeline()
    errors: list[BaseException] = []

    def build(chunking: str | None) -> None:
        try:
            p.retriever(chunking)
        except BaseException as exc:  # reported by the assert below
            errors.append(exc)

    threads = [threading.Thread(target=build, args=(c,)) for c in (None, "document")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors and p.prepared() and p.prepared("document")


def test_a_call_on_a_built_index_does_not_wait_for_another_build(hooked):
    p = hooked_pipeline().build()
    entered, release = threading.Event(), threading.Event()

    def block(chunks: Sequence[Chunk]) -> None:
        entered.set()
        release.wait(timeout=60)

    hooked.append(block)
    builder = threading.Thread(target=p.retriever, args=("document",))
    builder.start()
    try:
        assert entered.wait(timeout=60)
        answered: list[str] = []
        caller = threading.Thread(target=lambda: answered.append(p.answer("refund?").answer))
        caller.start()
        caller.join(timeout=60)
        assert answered, "a call on the built index waited for the document index's build"
        assert not p.prepared("document")
    finally:
        release.set()
        builder.join(timeout=60)
    assert p.prepared("document")


def test_one_index_is_built_once_under_concurrency(hooked):
    builds: list[int] = []
    hooked.append(lambda chunks: builds.append(len(chunks)))
    p = hooked_pipeline()
    start = threading.Barrier(6, timeout=20)

    def call() -> None:
        start.wait()
        p.answer("How many days of leave?", Variation(chunking="document"))

    threads = [threading.Thread(target=call) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert builds == [len(DOCS)]  # one build of the whole-document index


def test_build_once_publishes_nothing_when_a_build_fails():
    once: BuildOnce[str, int] = BuildOnce()

    def fail() -> int:
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        once.get("a", fail)
    assert not once.built("a")
    assert once.get("a", lambda: 1) == 1 and once.get("a", lambda: 2) == 1
    assert once.keys() == ["a"] and once.wait_s == 0.0

"""The reference pipeline and each of its capabilities, on a small real corpus."""

from __future__ import annotations

import importlib.util
from concurrent.futures import ThreadPoolExecutor

import pytest

from probeguard.core.documents import Document
from probeguard.core.errors import UnsupportedCapabilityError
from probeguard.core.pipeline import Capability, Variation
from probeguard.pipeline.config import ReferencePipelineConfig
from probeguard.pipeline.reference import ReferencePipeline, chunking_spec

DOCS = [
    Document(
        id="refunds",
        title="Refund policy",
        text="Customers may return items within 30 days of delivery for a full refund. "
        "Refunds are issued within 5 business days after inspection.",
    ),
    Document(
        id="shipping",
        title="Shipping policy",
        text="We ship to Canada and Mexico. Standard delivery takes 3 to 5 business days.",
        metadata={"status": "current"},
    ),
    Document(
        id="leave",
        title="Leave policy",
        text="Employees receive 25 days of paid annual leave each calendar year.",
        metadata={"status": "current"},
    ),
]


def pipeline(**overrides) -> ReferencePipeline:
    cfg = ReferencePipelineConfig(
        **{
            "embedder": {"name": "hashing", "dim": 1024},
            "chunker": {"name": "tokens", "size": 24, "overlap": 4},
            "top_k": 2,
            **overrides,
        }
    )
    return ReferencePipeline(DOCS, cfg)


def test_answers_with_citations_and_retrieved_chunks():
    out = pipeline().answer("How many days do customers have to return items for a refund?")
    assert "30 days" in out.answer and not out.refused
    assert out.retrieved[0].doc_id == "refunds" and out.retrieved[0].rank == 1
    assert out.cited_chunk_ids and out.cited_chunk_ids[0] in {r.chunk_id for r in out.retrieved}
    assert out.latency_s is not None and out.latency_s >= 0


def test_declares_every_capability():
    assert pipeline().capabilities == frozenset(Capability)


def test_overlay_injects_without_reindexing():
    p = pipeline()
    p.build()
    before = list(p.chunks)
    poison = Document(
        id="poison",
        text="Customers may return items within 90 days of delivery "
        "for a full refund, no receipt needed.",
    )
    out = p.answer("How many days do customers have to return items?", Variation(overlay=(poison,)))
    assert "poison" in {r.doc_id for r in out.retrieved}
    assert p.chunks == before  # the index itself is untouched
    clean = p.answer("How many days do customers have to return items?")
    assert "poison" not in {r.doc_id for r in clean.retrieved}


def test_mask_hides_documents():
    out = pipeline().answer(
        "How many days to return items for a refund?", Variation(exclude_doc_ids=("refunds",))
    )
    assert "refunds" not in {r.doc_id for r in out.retrieved}


def test_whole_document_chunking():
    out = pipeline().answer("When are refunds issued?", Variation(chunking="document"))
    top = out.retrieved[0]
    assert top.doc_id == "refunds" and top.text == DOCS[0].text


def test_oracle_context_skips_retrieval():
    out = pipeline().answer(
        "How long is annual leave?", Variation(contexts=("Annual leave is 25 days per year.",))
    )
    assert [r.doc_id for r in out.retrieved] == ["oracle"]
    assert "25 days" in out.answer


def test_prompt_override_is_recorded():
    out = pipeline().answer("How long is annual leave?", Variation(prompt="hardened"))
    assert out.metadata["prompt"] == "hardened"


def test_retrieval_overrides_mode_topk_and_filters():
    p = pipeline()
    out = p.answer("business days", Variation(retrieval={"mode": "bm25", "top_k": 1}))
    assert len(out.retrieved) == 1
    out = p.answer("days", Variation(retrieval={"filters": {"status": "current"}, "top_k": 5}))
    assert {r.doc_id for r in out.retrieved} <= {"shipping", "leave"}
    with pytest.raises(ValueError, match="unknown retrieval overrides"):
        p.answer("days", Variation(retrieval={"topk": 3}))
    with pytest.raises(ValueError, match="at least 1"):
        p.answer("days", Variation(retrieval={"top_k": 0}))


def test_rerank_false_gives_the_retrievers_own_order_for_one_call():
    reranked = pipeline(reranker={"name": "lexical"}, rerank_candidates=3)
    question = "How many days of paid annual leave do employees receive?"
    off = reranked.answer(question, Variation(retrieval={"rerank": False, "top_k": 2}))
    plain = pipeline().answer(question, Variation(retrieval={"top_k": 2}))
    assert [(r.chunk_id, r.score) for r in off.retrieved] == [
        (r.chunk_id, r.score) for r in plain.retrieved
    ]
    on = reranked.answer(question, Variation(retrieval={"top_k": 2}))
    assert [r.score for r in on.retrieved] != [r.score for r in off.retrieved]
    with pytest.raises(ValueError, match="true or false"):
        reranked.answer(question, Variation(retrieval={"rerank": "no"}))


def test_min_score_gate_can_empty_retrieval_and_generator_refuses():
    out = pipeline(retriever={"name": "dense", "min_score": 0.99}).answer(
        "What is the capital of France?"
    )
    assert out.retrieved == [] and out.refused


def test_unknown_chunking_is_a_clear_error():
    with pytest.raises(ValueError, match="tokens-SIZE-OVERLAP"):
        chunking_spec("paragraphs")
    assert chunking_spec("tokens-64-8") == {"name": "tokens", "size": 64, "overlap": 8}


def test_fingerprint_tracks_configuration_and_corpus():
    a, b = pipeline(), pipeline()
    assert a.fingerprint() == b.fingerprint()
    assert pipeline(top_k=3).fingerprint() != a.fingerprint()
    assert (
        pipeline(generator={"name": "extractive", "min_support": 0.5}).fingerprint()
        != a.fingerprint()
    )
    other = ReferencePipeline(DOCS[:2], a.config)
    assert other.fingerprint() != a.fingerprint()


def test_concurrent_answers_match_sequential():
    p = pipeline()
    questions = ["How many days to return items?", "Where do you ship?", "How long is leave?"] * 4
    sequential = [p.answer(q).model_dump(exclude={"latency_s"}) for q in questions]
    with ThreadPoolExecutor(max_workers=6) as pool:
        parallel = list(
            pool.map(lambda q: p.answer(q).model_dump(exclude={"latency_s"}), questions)
        )
    assert parallel == sequential


def test_callable_without_capabilities_reports_them():
    from probeguard.core.pipeline import check_capabilities
    from probeguard.pipeline.adapters.callable import CallablePipeline

    plain = CallablePipeline(lambda q: "an answer")
    with pytest.raises(UnsupportedCapabilityError, match="overlay"):
        check_capabilities(plain, Variation(overlay=(DOCS[0],)))


def test_persistent_chroma_store_behind_the_reference_pipeline(tmp_path):
    pytest.importorskip("chromadb", reason="chromadb is not installed (extra 'chroma')")
    p = pipeline(retriever={"name": "chroma", "path": str(tmp_path / "chroma")})
    out = p.answer("How many days do customers have to return items for a refund?")
    assert out.retrieved[0].doc_id == "refunds" and "30 days" in out.answer
    masked = p.answer(
        "How many days do customers have to return items for a refund?",
        Variation(exclude_doc_ids=("refunds",)),
    )
    assert "refunds" not in {r.doc_id for r in masked.retrieved}
    assert (tmp_path / "chroma").is_dir()  # persisted on disk


@pytest.mark.skipif(
    importlib.util.find_spec("chromadb") is None,
    reason="chromadb is not installed (extra 'chroma')",
)
def test_chroma_alternative_chunking_keeps_the_default_index(tmp_path):
    # Regression: each chunking builds its own retriever, and every ChromaRetriever of one
    # config shared one collection name, so indexing "document" chunks deleted the collection
    # the default chunking was searching.
    p = pipeline(retriever={"name": "chroma", "path": str(tmp_path / "chroma")})
    question = "How many days do customers have to return items for a refund?"
    before = p.answer(question)
    whole = p.answer(question, Variation(chunking="document"))
    assert whole.retrieved[0].doc_id == "refunds"
    assert whole.retrieved[0].text == DOCS[0].text  # a whole-document chunk
    after = p.answer(question)  # the default index still works
    assert [r.chunk_id for r in after.retrieved] == [r.chunk_id for r in before.retrieved]


def test_retrieve_only_skips_generation():
    out = pipeline().answer("How many days to return items?", Variation(retrieve_only=True))
    assert out.answer == "" and out.retrieved and out.retrieved[0].doc_id == "refunds"
    assert out.metadata["prompt"] == "none"

"""CallablePipeline: return conversions, import targets, async functions, variations."""

from __future__ import annotations

import asyncio
import textwrap

import pytest

from probeguard.core.cases import Case
from probeguard.core.errors import InputError, PipelineCallError, UnsupportedCapabilityError
from probeguard.core.pipeline import Capability, PipelineOutput, RetrievedChunk, Variation
from probeguard.pipeline.adapters import CallablePipeline
from probeguard.runner import Runner, RunnerConfig


def test_str_return_is_the_answer() -> None:
    pipe = CallablePipeline(lambda q: f"echo {q}", version="1")
    assert pipe.answer("hi") == PipelineOutput(answer="echo hi")
    assert pipe.capabilities == frozenset()
    assert not hasattr(pipe, "aanswer")


def test_dict_return_with_contexts_citations_and_refusal() -> None:
    def rag(question: str) -> dict:
        return {
            "answer": "Paris [1]",
            "contexts": [
                "plain passage",
                {
                    "text": "Paris is the capital.",
                    "doc_id": "geo",
                    "chunk_id": "geo#0-21",
                    "score": "0.75",
                    "page": 4,
                },
            ],
            "cited_chunk_ids": ["geo#0-21"],
            "refused": False,
            "usage": {"prompt_tokens": 10},
            "metadata": {"model": "m"},
        }

    out = CallablePipeline(rag).answer("capital?")
    assert out.answer == "Paris [1]"
    plain, geo = out.retrieved
    assert (plain.rank, plain.doc_id, plain.text) == (1, "", "plain passage")
    assert plain.chunk_id.startswith("ctx-") and len(plain.chunk_id) == 16
    assert geo == RetrievedChunk(
        chunk_id="geo#0-21",
        doc_id="geo",
        text="Paris is the capital.",
        rank=2,
        score=0.75,
        metadata={"page": 4},
    )
    assert out.cited_chunk_ids == ["geo#0-21"]
    assert out.usage.prompt_tokens == 10 and out.metadata == {"model": "m"}
    # The content-derived id is stable.
    assert CallablePipeline(rag).answer("x").retrieved[0].chunk_id == plain.chunk_id


def test_dict_refusal_and_retrieved_alias() -> None:
    out = CallablePipeline(
        lambda q: {"answer": "I don't know", "refused": True, "retrieved": [{"text": "t"}]}
    ).answer("q")
    assert out.refused and out.retrieved[0].text == "t"


def test_pipeline_output_return_passes_through() -> None:
    expected = PipelineOutput(answer="x", refused=True, latency_s=0.5)
    assert CallablePipeline(lambda q: expected).answer("q") is expected


@pytest.mark.parametrize(
    "value, message",
    [
        ({"answr": "typo"}, "unknown keys ['answr']"),
        ({"contexts": []}, "without 'answer'"),
        ({"answer": "a", "contexts": [{"doc_id": "d"}]}, "no 'text'"),
        ({"answer": "a", "contexts": [3]}, "context 1 is a int"),
        (42, "returned a int"),
    ],
)
def test_bad_returns_are_clear_non_transient_errors(value, message) -> None:
    with pytest.raises(
        PipelineCallError, match=message.replace("[", r"\[").replace("]", r"\]")
    ) as info:
        CallablePipeline(lambda q: value).answer("q")
    assert not info.value.transient


def test_import_target(tmp_path, monkeypatch) -> None:
    (tmp_path / "pg_user_rag_mod.py").write_text(
        textwrap.dedent("""
        class Bot:
            @staticmethod
            def ask(question):
                return {"answer": question[::-1]}

        def answer(question):
            return "module says " + question

        not_callable = 3
    """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    pipe = CallablePipeline("pg_user_rag_mod:answer")
    assert pipe.answer("hi").answer == "module says hi"
    assert pipe.name == "pg_user_rag_mod:answer"
    assert CallablePipeline("pg_user_rag_mod:Bot.ask").answer("abc").answer == "cba"
    with pytest.raises(InputError, match="not a callable"):
        CallablePipeline("pg_user_rag_mod:not_callable")
    with pytest.raises(InputError, match="no attribute path 'nope'"):
        CallablePipeline("pg_user_rag_mod:nope")


@pytest.mark.parametrize(
    "target, message",
    [
        ("pg_no_such_module_xyz:answer", "cannot import module 'pg_no_such_module_xyz'"),
        ("json", "expected 'package.module:function'"),
        (":f", "expected 'package.module:function'"),
    ],
)
def test_bad_targets_name_the_target(target, message) -> None:
    with pytest.raises(InputError, match=message) as info:
        CallablePipeline(target)
    assert info.value.field == "target"
    assert target in str(info.value)


async def test_async_callable_is_native_and_runs_through_the_runner() -> None:
    in_flight = 0
    peak = 0

    async def rag(question: str) -> str:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return question.upper()

    pipe = CallablePipeline(rag, name="async-rag")
    assert callable(pipe.aanswer)
    assert (await pipe.aanswer("x")).answer == "X"
    cases = [Case(id=str(i), question=f"q{i}") for i in range(12)]
    result = await Runner(pipe, RunnerConfig(concurrency=6)).arun(cases)
    assert [r.output.answer for r in result.records] == [f"Q{i}" for i in range(12)]
    assert peak == 6  # awaited on the loop, not squeezed through threads


def test_async_callable_answer_works_synchronously() -> None:
    async def rag(question: str) -> str:
        return "async " + question

    assert CallablePipeline(rag).answer("q").answer == "async q"


def test_variation_is_passed_and_capabilities_are_reported() -> None:
    seen: list[Variation | None] = []

    def rag(question: str, variation: Variation | None = None) -> dict:
        seen.append(variation)
        contexts = list(variation.contexts) if variation and variation.contexts else ["retrieved"]
        return {"answer": "from " + contexts[0], "contexts": contexts}

    rag.capabilities = {"oracle_context"}  # type: ignore[attr-defined]
    pipe = CallablePipeline(rag)
    assert pipe.capabilities == frozenset({Capability.ORACLE_CONTEXT})
    cases = [
        Case(id="plain", question="q"),
        Case(id="oracle", question="q", variation=Variation(contexts=("gold",))),
        Case(id="overlay", question="q", variation=Variation(prompt="hardened")),
    ]
    result = Runner(pipe).run(cases)
    plain, oracle, prompt = result.records
    assert plain.output.answer == "from retrieved"
    assert oracle.output.answer == "from gold"
    assert prompt.error.type == "UnsupportedCapabilityError"
    assert seen == [None, Variation(contexts=("gold",))]


def test_a_variation_keyword_without_capabilities_declares_none() -> None:
    pipe = CallablePipeline(lambda q, variation=None: "x")
    assert pipe.capabilities == frozenset()
    with pytest.raises(UnsupportedCapabilityError):
        pipe.answer("q", Variation(exclude_doc_ids=("d",)))


def test_a_function_without_variation_gets_only_the_question() -> None:
    calls: list[tuple] = []

    def rag(question):
        calls.append((question,))
        return "ok"

    pipe = CallablePipeline(rag)
    assert pipe.answer("q", None).answer == "ok"
    assert calls == [("q",)]
    with pytest.raises(UnsupportedCapabilityError):
        pipe.answer("q", Variation(contexts=("c",)))


def test_capabilities_without_a_variation_keyword_or_unknown_names_are_rejected() -> None:
    def rag(question):
        return "x"

    rag.capabilities = {"mask"}  # type: ignore[attr-defined]
    with pytest.raises(InputError, match="does not accept a 'variation'"):
        CallablePipeline(rag)

    def rag2(question, variation=None):
        return "x"

    rag2.capabilities = {"telepathy"}  # type: ignore[attr-defined]
    with pytest.raises(InputError, match="unknown capability 'telepathy'"):
        CallablePipeline(rag2)


def test_callable_object_with_capabilities() -> None:
    class Rag:
        capabilities = ("mask",)

        def __call__(self, question: str, *, variation: Variation | None = None) -> str:
            return ",".join(variation.exclude_doc_ids) if variation else "all"

    pipe = CallablePipeline(Rag())
    assert pipe.answer("q", Variation(exclude_doc_ids=("d1", "d2"))).answer == "d1,d2"
    assert pipe.target.endswith(":test_callable_object_with_capabilities.<locals>.Rag")


def test_fingerprint_depends_on_target_and_version_only() -> None:
    def rag(question):
        return "a"

    base = CallablePipeline(rag)
    assert base.fingerprint() == CallablePipeline(rag, name="renamed").fingerprint()
    assert base.fingerprint() != CallablePipeline(rag, version="2").fingerprint()
    assert CallablePipeline(lambda q: "a").fingerprint() != base.fingerprint()
    assert CallablePipeline(rag, fingerprint="mine").fingerprint() == "mine"
    assert len(base.fingerprint()) == 64


def test_a_module_that_is_not_on_the_path_gets_a_hint(tmp_path) -> None:
    (tmp_path / "pg_beside_the_config.py").write_text("def answer(q):\n    return q\n")
    with pytest.raises(InputError, match="PYTHONPATH") as info:
        CallablePipeline("pg_beside_the_config:answer")
    assert "pg_beside_the_config.py" in str(info.value)


def test_a_missing_dependency_of_the_module_gets_no_path_hint(tmp_path, monkeypatch) -> None:
    (tmp_path / "pg_needs_missing_dep.py").write_text("import pg_no_such_dep_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(InputError, match="pg_no_such_dep_xyz") as info:
        CallablePipeline("pg_needs_missing_dep:answer")
    assert "PYTHONPATH" not in str(info.value)

"""Attack-types probe: dataset and generated cases (deterministic, capped, honest), verdicts
and per type × layer summaries, and the real reference pipeline (hashing embedder,
extractive generator) through the real runner on the demo corpus and demo attacks."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from probeguard.core.cases import Case, Expected
from probeguard.core.documents import Document
from probeguard.core.pipeline import PipelineOutput, RetrievedChunk
from probeguard.core.records import CaseError, CaseRecord
from probeguard.corpus.loaders import load_corpus
from probeguard.corpus.questions import load_questions
from probeguard.dataset.attack_types import ATTACK_TYPES, load_attack_cases
from probeguard.engine.stages import demo_data_dir
from probeguard.nlp.text import contains_answer
from probeguard.pipeline.config import ReferencePipelineConfig
from probeguard.pipeline.reference import ReferencePipeline
from probeguard.probes import JudgeContext, ProbeContext, group_records, make_probe
from probeguard.probes.attack_types import ASK_ROLE, AttackTypes, false_premise
from probeguard.runner.executor import Runner, RunnerConfig

HASHING = {"name": "hashing", "dim": 1024}


@pytest.fixture(scope="module")
def demo():
    data = demo_data_dir()
    docs = load_corpus(data / "corpus.jsonl")
    questions = load_questions(data / "questions.jsonl", corpus_ids={d.id for d in docs})
    attacks = load_attack_cases(data / "attacks.jsonl", corpus_ids={d.id for d in docs})
    return docs, questions, attacks


def context(demo, seed: int = 0, attacks: bool = True, top_k: int = 5) -> ProbeContext:
    docs, questions, attack_cases = demo
    return ProbeContext(
        documents=tuple(docs),
        questions=tuple(questions),
        seed=seed,
        top_k=top_k,
        attack_cases=tuple(attack_cases) if attacks else (),
    )


# -- generation ------------------------------------------------------------------------
def test_dataset_cases_become_one_group_each(demo):
    _, _, attacks = demo
    cases = AttackTypes(generated=False).generate(context(demo))
    assert [c.meta["group"] for c in cases] == [a.id for a in attacks]
    for case, source in zip(cases, attacks):
        assert case.id == f"attack_types:{source.id}:{ASK_ROLE}" and case.probe == "attack_types"
        assert case.question == source.question and case.expected == source.expected
        assert case.variation.is_default()
        assert case.meta["attack_type"] == source.meta["attack_type"]
        assert case.meta["origin"] == "dataset" and case.meta["file"] == "attacks.jsonl"
        assert isinstance(case.meta["line"], int) and case.meta["case_id"] == source.id


def test_generation_is_deterministic_and_seeded(demo):
    a = AttackTypes().generate(context(demo, seed=3))
    b = AttackTypes().generate(context(demo, seed=3))
    assert [c.model_dump_json() for c in a] == [c.model_dump_json() for c in b]
    assert len({c.id for c in a}) == len(a)


def test_generated_cases_alternate_and_are_capped(demo):
    cases = AttackTypes(max_generated=6).generate(context(demo, attacks=False))
    assert [c.meta["attack_type"] for c in cases] == ["lexical_mismatch", "false_premise"] * 3
    assert all(c.meta["origin"] == "generated" for c in cases)
    assert AttackTypes(max_generated=0).generate(context(demo, attacks=False)) == []
    assert AttackTypes(generated=False).generate(context(demo, attacks=False)) == []
    everything = AttackTypes(max_generated=10_000).generate(context(demo, attacks=False))
    assert len(AttackTypes().generate(context(demo, attacks=False))) == min(40, len(everything))


def test_generated_lexical_cases_reword_the_golden_question(demo):
    _, questions, _ = demo
    golden = {q.id: q for q in questions}
    cases = AttackTypes(types=("lexical_mismatch",), max_generated=10_000).generate(
        context(demo, attacks=False)
    )
    assert cases and {c.meta["attack_type"] for c in cases} == {"lexical_mismatch"}
    for case in cases:
        q = golden[case.meta["question_id"]]
        assert case.question != q.question and case.meta["original"] == q.question
        assert case.expected == q.expected and q.expected.evidence_doc_ids
        assert case.meta["rule"] in ("paraphrase:synonym", "paraphrase:jargon")
        assert case.meta["group"] == f"gen-lexical-{q.id}-{case.meta['rule'].split(':')[1]}"


def test_generated_false_premises_assert_a_value_the_evidence_contradicts(demo):
    docs, questions, _ = demo
    by_id = {d.id: d for d in docs}
    golden = {q.id: q for q in questions}
    cases = AttackTypes(types=("false_premise",), max_generated=10_000).generate(
        context(demo, attacks=False)
    )
    assert len(cases) >= 10
    for case in cases:
        q, exp, meta = golden[case.meta["question_id"]], case.expected, case.meta
        assert exp.mode == "correct_premise" and exp.answers == q.expected.answers
        assert case.question.startswith("I read that ") and case.question.endswith(q.question)
        (phrase,) = exp.excludes
        assert phrase == meta["false_phrase"] and meta["false_value"] in phrase
        assert contains_answer(case.question, phrase)  # the premise asserts it
        assert not contains_answer(by_id[meta["premise_doc_id"]].text, phrase)  # false
        assert not any(contains_answer(phrase, a) for a in exp.answers)
        assert meta["rule"] in ("mutation:number", "mutation:date")
    q01 = next(c for c in cases if c.meta["question_id"] == "q01")
    assert q01.question.startswith("I read that customers may return most items within ")
    # a phone number is an identifier, not a mutable number: no premise for q12
    assert not any(c.meta["question_id"] == "q12" for c in cases)


def test_false_premise_needs_a_plain_sentence_with_a_mutable_answer():
    q = Case(
        id="q",
        question="How long is the warranty?",
        expected=Expected(answers=("2 years",), evidence_doc_ids=("w",)),
    )
    doc = Document(
        id="w",
        title="Warranty",
        text="Warranty: 2 years.\n\nTents sold by Kestrel are covered for 2 years "
        "from the date of purchase.",
    )
    text, phrase, m, doc_id = false_premise(q, [doc], np.random.default_rng(0))
    assert doc_id == "w" and m.old == "2" and phrase == f"{m.new} years"
    assert text == (
        f"I read that tents sold by Kestrel are covered for {m.new} years from the "
        "date of purchase. How long is the warranty?"
    )
    no_number = Case(id="q2", question="Who?", expected=Expected(answers=("Kestrel",)))
    assert false_premise(no_number, [doc], np.random.default_rng(0)) is None


def test_settings_are_validated_and_recorded():
    assert make_probe("attack_types", {"types": ["distractor"], "max_generated": 3}).config() == {
        "name": "attack_types",
        "types": ["distractor"],
        "generated": True,
        "max_generated": 3,
    }
    for bad in (
        {"types": ["stale"]},
        {"types": []},
        {"types": ["distractor", "distractor"]},
        {"max_generated": -1},
        {"max_generated": 1.5},
    ):
        with pytest.raises(ValueError):
            AttackTypes(**bad)


def test_types_filter_dataset_and_generated_cases(demo):
    cases = AttackTypes(types=("unanswerable", "false_premise")).generate(context(demo))
    assert {c.meta["attack_type"] for c in cases} == {"unanswerable", "false_premise"}


def test_attack_cases_without_a_type_are_rejected(demo):
    docs, questions, _ = demo
    ctx = ProbeContext(
        documents=tuple(docs), questions=(), attack_cases=(Case(id="x", question="Who?"),)
    )
    with pytest.raises(ValueError, match="attack_type"):
        AttackTypes().generate(ctx)


# -- judging and summaries -------------------------------------------------------------
def _record(case: Case, output: PipelineOutput | None) -> CaseRecord:
    if output is None:
        return CaseRecord(
            case=case, call_key="k", error=CaseError(type="TimeoutError", message="slow")
        )
    return CaseRecord(case=case, call_key="k", output=output)


def _judge(probe, ctx, records):
    groups = group_records(records, probe.name)
    return [probe.judge(g, r, JudgeContext(probe=ctx)) for g, r in groups.items()]


def test_verdicts_and_per_type_layer_summary(demo):
    ctx = context(demo)
    probe = AttackTypes(generated=False)
    cases = {c.meta["group"]: c for c in probe.generate(ctx)}
    tents = [
        RetrievedChunk(chunk_id="w#0", doc_id="pol-warranty", text="...", rank=1),
        RetrievedChunk(chunk_id="d#0", doc_id="pol-warranty-draft", text="...", rank=2),
    ]
    records = [
        # citation trap: right answer, but it cites the draft
        _record(
            cases["cit-01"],
            PipelineOutput(
                answer="Covered for 2 years [2].", retrieved=tents, cited_chunk_ids=["d#0"]
            ),
        ),
        # citation trap: right answer citing the approved policy
        _record(
            cases["cit-02"],
            PipelineOutput(answer="1 year [1].", retrieved=tents, cited_chunk_ids=["w#0"]),
        ),
        _record(cases["una-01"], PipelineOutput(answer="", refused=True)),
        _record(cases["una-02"], PipelineOutput(answer="About 140 people.")),
        _record(cases["tmp-01"], None),  # errored: unscored
    ]
    verdicts = _judge(probe, ctx, records)
    by_case = {v.evidence["question"]: v for v in verdicts}
    trap = by_case[cases["cit-01"].question]
    assert trap.failed is True and trap.evidence["failed_layers"] == ["citation"]
    assert trap.evidence["layers"]["answer"] is True
    assert trap.evidence["detail"]["cited_non_evidence"] == ["pol-warranty-draft"]
    assert by_case[cases["cit-02"].question].failed is False
    assert by_case[cases["una-01"].question].evidence["layers"]["abstention"] is True
    assert by_case[cases["una-02"].question].failed is True
    errored = by_case[cases["tmp-01"].question]
    assert errored.failed is None and "TimeoutError" in errored.evidence["unscored"]

    s = probe.summarize(verdicts)
    assert s["failure_rate"]["n"] == 4 and s["unscored"] == 1 and s["groups"] == 5
    assert list(s["per_type"]) == list(ATTACK_TYPES)
    cit = s["per_type"]["citation_trap"]
    assert (cit["citation"]["value"], cit["citation"]["n"]) == (0.5, 2)
    assert (cit["pass"]["value"], cit["pass"]["n"]) == (0.5, 2)
    assert cit["abstention"]["n"] == 0 and math.isnan(cit["abstention"]["value"])
    una = s["per_type"]["unanswerable"]
    assert (una["abstention"]["value"], una["abstention"]["n"]) == (0.5, 2)
    assert una["retrieval"]["n"] == 0 and una["answer"]["n"] == 0
    tmp = s["per_type"]["temporal_conflict"]
    assert tmp["cases"] == 1 and tmp["unscored"] == 1 and tmp["pass"]["n"] == 0
    lex = s["per_type"]["lexical_mismatch"]
    assert lex["cases"] == 0 and math.isnan(lex["pass"]["value"])
    assert s["overall"]["pass"]["n"] == 4 and s["overall"]["cases"] == 5
    for row in (*s["per_type"].values(), s["overall"]):
        for layer in ("retrieval", "answer", "abstention", "citation", "pass"):
            assert set(row[layer]) == {"value", "low", "high", "n", "method"}
            assert row[layer]["method"] == "wilson"


def test_empty_summary_is_undefined_not_zero():
    s = AttackTypes().summarize([])
    assert s["failure_rate"]["n"] == 0
    assert all(math.isnan(row["pass"]["value"]) for row in s["per_type"].values())
    assert s["overall"]["retrieval"]["n"] == 0


# -- the real reference pipeline through the real runner --------------------------------
def test_reference_pipeline_on_demo_attacks(demo):
    docs, _, _ = demo
    pipeline = ReferencePipeline(
        docs,
        ReferencePipelineConfig(
            embedder=HASHING, retriever={"name": "hybrid"}, generator={"name": "extractive"}
        ),
    )
    ctx = dataclasses.replace(
        context(demo), top_k=pipeline.config.top_k, chunks=tuple(pipeline.chunks)
    )
    probe = AttackTypes(max_generated=10)
    result = Runner(pipeline, RunnerConfig(concurrency=2)).run(probe.generate(ctx))
    assert not result.errors
    verdicts = _judge(probe, ctx, result.records)
    s = probe.summarize(verdicts)
    assert s["unscored"] == 0 and s["groups"] == len(verdicts) == 47 + 10
    rows = s["per_type"]
    for type_ in ATTACK_TYPES:
        assert rows[type_]["cases"] >= 4 and rows[type_]["pass"]["n"] == rows[type_]["cases"]
    for type_ in set(ATTACK_TYPES) - {"unanswerable"}:
        assert rows[type_]["retrieval"]["n"] == rows[type_]["cases"]
        assert rows[type_]["answer"]["n"] == rows[type_]["cases"]
        assert rows[type_]["abstention"]["n"] == 0
    assert rows["unanswerable"]["abstention"]["n"] == rows["unanswerable"]["cases"]
    assert rows["unanswerable"]["answer"]["n"] == 0
    # the reference pipeline cites: the citation layer is scored, on every trap answered
    assert rows["citation_trap"]["citation"]["n"] >= 4
    # the extractive generator quotes the current and the archived policy side by side:
    # the stale value leaks into temporal-conflict answers
    leaked = [
        v
        for v in verdicts
        if v.evidence["attack_type"] == "temporal_conflict"
        and v.evidence["detail"].get("found_excludes")
    ]
    assert leaked
    assert rows["temporal_conflict"]["answer"]["value"] < 1.0
    # it can only quote the corpus, so it never repeats a false premise's value
    premises = [v for v in verdicts if v.evidence["attack_type"] == "false_premise"]
    assert premises and not any(v.evidence["detail"].get("found_excludes") for v in premises)
    overall = s["overall"]
    assert overall["pass"]["n"] == len(verdicts)
    assert math.isclose(overall["pass"]["value"], 1.0 - s["failure_rate"]["value"])

"""Contract tests over every registered probe: deterministic under a seed, valid cases with
unique ids, metadata a reader needs, honest verdicts for groups that cannot be judged, and
the whole plugin — goal, overlap weight, failing roles, fix hints the recommender reads, typed
evidence that survives run.json, a typed summary — on the demo through a real pipeline."""

from __future__ import annotations

import pytest

from probeguard.attribution.recommend import CaseFacts, recommend
from probeguard.core.pipeline import Capability
from probeguard.core.records import CaseError, CaseRecord
from probeguard.corpus.chunkers import make_chunker
from probeguard.corpus.loaders import load_corpus
from probeguard.corpus.questions import load_questions
from probeguard.engine.stages import demo_data_dir
from probeguard.probes import (
    BUILTIN_MODULES,
    FIX_HINTS,
    JudgeContext,
    ProbeContext,
    ProbeEvidence,
    ProbeSummary,
    group_records,
    load_probes,
    make_probe,
)
from probeguard.probes.config import ProbesConfig
from probeguard.runner.executor import Runner, RunnerConfig
from testkit import check_probe_attributes, check_probe_contract, reference_pipeline, timed_out

PROBES = sorted(load_probes())
CHUNKER = {"name": "tokens", "size": 128, "overlap": 32}


@pytest.fixture(scope="module")
def demo_context() -> ProbeContext:
    data = demo_data_dir()
    docs = load_corpus(data / "corpus.jsonl")
    questions = load_questions(data / "questions.jsonl")
    chunks = make_chunker(CHUNKER).chunk_all(docs)
    return ProbeContext(
        documents=tuple(docs),
        questions=tuple(questions),
        seed=7,
        top_k=5,
        capabilities=frozenset(Capability),
        chunks=tuple(chunks),
        chunker=CHUNKER,
    )


def test_the_four_structural_probes_are_registered():
    assert {"chunk_fracture", "retrieval_gap", "corpus_contradiction", "prompt_hijack"} <= set(
        PROBES
    )


def test_the_built_in_probes_declare_what_sweep_bench_and_fix_read():
    """The built-in probes' families, headlines, attack-case use and benign controls: what
    ``bench hotpotqa``, ``sweep``, the scan's attack loading and ``fix`` used to name."""
    builtin = {n: c for n, c in load_probes().items() if c.__module__ in BUILTIN_MODULES}
    assert [n for n, c in builtin.items() if c.family == "structural"] == [
        "chunk_fracture",
        "retrieval_gap",
        "corpus_contradiction",
        "prompt_hijack",
    ]
    assert {c.family for c in builtin.values()} == {"structural", "security"}
    assert [n for n, c in builtin.items() if c.uses_attack_cases] == ["attack_types"]
    assert [n for n, c in builtin.items() if c.benign_controls] == ["benign_control"]
    assert all(c.headlines for c in builtin.values())


def test_the_registry_lists_the_built_in_probes_first_and_enables_every_one_by_default():
    registry = list(load_probes())
    modules = [load_probes()[name].__module__ for name in registry[: len(BUILTIN_MODULES)]]
    assert modules == list(BUILTIN_MODULES)
    assert ProbesConfig().enabled == registry


@pytest.mark.parametrize("name", PROBES)
def test_metadata(name):
    cls = load_probes()[name]
    assert cls.name == name and cls.goal.strip()
    assert cls.requires <= frozenset(Capability)
    assert isinstance(cls.overlap_weight, float) and 0.0 <= cls.overlap_weight <= 1.0
    assert issubclass(cls.evidence_model, ProbeEvidence)
    assert issubclass(cls.summary_model, ProbeSummary)
    assert callable(cls.failing_roles) and callable(cls.case_fix_hints)
    assert cls.fix_hints <= set(FIX_HINTS), f"{name}: unknown fix hints"
    check_probe_attributes(cls)
    assert make_probe(name).config()["name"] == name


@pytest.mark.parametrize("hint", sorted(FIX_HINTS))
def test_every_fix_hint_changes_a_recommendation(hint):
    """A hint a probe may give is one the recommender reads: for some cause, the fix with
    the hint differs from the fix without it."""
    changed = [
        cause
        for cause in ("retriever", "chunker", "corpus", "prompt", "generator")
        if recommend(cause, CaseFacts(hints=frozenset({hint}))) != recommend(cause, CaseFacts())
    ]
    assert changed, f"no recommendation reads the fix hint {hint!r}"


@pytest.mark.parametrize("name", PROBES)
def test_generate_judge_summarize_on_the_demo(name, demo_context):
    check_probe_contract(make_probe(name), demo_context)


@pytest.mark.parametrize("name", PROBES)
def test_generation_is_deterministic_and_valid(name, demo_context):
    first = make_probe(name).generate(demo_context)
    second = make_probe(name).generate(demo_context)
    assert first, f"{name} generated no cases on the demo corpus"
    assert [c.model_dump_json() for c in first] == [c.model_dump_json() for c in second]
    ids = [c.id for c in first]
    assert len(ids) == len(set(ids))
    for case in first:
        assert case.probe == name
        assert {"group", "role"} <= set(case.meta)
        assert case.id == f"{name}:{case.meta['group']}:{case.meta['role']}"
        assert case.variation.required_capabilities() <= demo_context.capabilities


@pytest.mark.parametrize("name", PROBES)
def test_seed_changes_randomised_choices_only(name, demo_context):
    other = ProbeContext(
        documents=demo_context.documents,
        questions=demo_context.questions,
        seed=8,
        top_k=5,
        capabilities=demo_context.capabilities,
        chunks=demo_context.chunks,
        chunker=demo_context.chunker,
    )
    a = make_probe(name).generate(demo_context)
    b = make_probe(name).generate(other)
    # the same probe units (groups) are generated whatever the seed
    assert {c.meta["group"] for c in a} == {c.meta["group"] for c in b}


@pytest.mark.parametrize("name", PROBES)
def test_errored_groups_are_unscored_not_passed(name, demo_context):
    p = make_probe(name)
    cases = p.generate(demo_context)
    records = [
        CaseRecord(case=c, call_key="k", error=CaseError(type="TimeoutError", message="slow"))
        for c in cases
    ]
    for group, by_role in list(group_records(records, name).items())[:3]:
        verdict = p.judge(group, by_role, JudgeContext(probe=demo_context))
        assert verdict.failed is None and verdict.evidence.get("unscored")


@pytest.mark.parametrize("name", PROBES)
def test_no_questions_no_cases(name, demo_context):
    empty = ProbeContext(
        documents=demo_context.documents,
        questions=(),
        seed=0,
        top_k=5,
        capabilities=demo_context.capabilities,
        chunks=demo_context.chunks,
    )
    # Some cases need no golden question (off-topic questions, planted benign pages): only
    # those kinds may remain.
    question_free = {"unanswerable": {"far_miss"}, "benign_control": {"planted"}}.get(name, set())
    assert all(c.meta.get("kind") in question_free for c in make_probe(name).generate(empty))
    summary = make_probe(name).summarize([])
    assert summary.failure_rate.n == 0 and summary.groups == 0


@pytest.fixture(scope="module")
def demo_records(demo_context) -> dict[str, list[CaseRecord]]:
    """Each probe's first two groups run through the fast reference pipeline (no errors)."""
    pipeline = reference_pipeline(demo_context.documents, top_k=5, chunk=(128, 32))
    runner = Runner(pipeline, RunnerConfig(concurrency=2))
    out = {}
    for name in PROBES:
        cases = make_probe(name).generate(demo_context)
        first = list(dict.fromkeys(c.meta["group"] for c in cases))[:2]
        result = runner.run([c for c in cases if c.meta["group"] in first])
        assert not result.errors, result.errors[0].error
        out[name] = result.records
    return out


@pytest.mark.parametrize("name", PROBES)
def test_an_errored_deciding_case_unscores_its_group(name, demo_context, demo_records):
    """The one rule for errored cases: a group is unscored when a case whose role could
    decide its verdict errored (each deciding role in turn), whatever the other roles show;
    an errored role that cannot decide it (evidence only) leaves the verdict as it was. A
    probe with evidence-only roles names its deciding ones (``Probe.deciding_roles``)."""
    p = make_probe(name)
    jctx = JudgeContext(probe=demo_context)
    groups = group_records(demo_records[name], name)
    assert groups
    for group, by_role in groups.items():
        deciding = p.deciding_roles(by_role)
        assert deciding and set(deciding) <= set(by_role)
        for role in deciding:
            verdict = p.judge(group, {**by_role, role: timed_out(by_role[role].case)}, jctx)
            assert verdict.failed is None, (group, role)
            assert role in str(verdict.evidence.unscored), (group, role)
        scored = p.judge(group, by_role, jctx).failed
        for role in set(by_role) - set(deciding):
            verdict = p.judge(group, {**by_role, role: timed_out(by_role[role].case)}, jctx)
            assert verdict.failed is scored, (group, role)

"""The synthesizer: determinism, coverage of evolutions and attack types, exact answer spans,
answerability by construction (BM25 baseline, absent terms), near duplicates, balance, and
the files loading through the existing golden-question and attack-case loaders."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from probeguard.core.documents import Document
from probeguard.corpus.jsonl_writer import write_jsonl_atomic
from probeguard.corpus.loaders import load_corpus
from probeguard.corpus.questions import load_questions
from probeguard.dataset.attack_types import ATTACK_TYPES, load_attack_cases
from probeguard.dataset.synth import NEAR_DUPLICATE, records, synthesize
from probeguard.dataset.synth_evolve import EVOLUTIONS
from probeguard.dataset.synth_facts import corpus_vocabulary, facts_of, key_terms
from probeguard.engine.stages import demo_data_dir
from probeguard.engine.synth import BASELINE_K, bm25_ranker, synthesize_checked

WATER = Path(__file__).resolve().parents[2] / "benchmarks" / "planted" / "data" / "corpus.jsonl"


@pytest.fixture(scope="module")
def demo_docs() -> list[Document]:
    return load_corpus(demo_data_dir() / "corpus.jsonl")


@pytest.fixture(scope="module")
def demo_synth(demo_docs: list[Document]):
    return synthesize_checked(demo_docs, 210, 7)


def _all(s):
    return [*s.golden, *s.attacks]


def test_same_seed_same_bytes_other_seed_other_cases(tmp_path: Path, demo_docs) -> None:
    paths = []
    for i, seed in enumerate((3, 3, 4)):
        s = synthesize_checked(demo_docs, 120, seed)
        path = tmp_path / f"g{i}.jsonl"
        write_jsonl_atomic(records(s.golden, attack=False) + records(s.attacks, attack=True), path)
        paths.append(path.read_bytes())
    assert paths[0] == paths[1]
    assert paths[0] != paths[2]


@pytest.mark.parametrize("corpus", ["demo", "water"])
def test_at_least_200_cases_cover_every_evolution_and_attack_type(corpus, demo_docs) -> None:
    docs = demo_docs if corpus == "demo" else load_corpus(WATER)
    s = synthesize_checked(docs, 220, 0)
    assert len(_all(s)) >= 200
    assert {c.meta.get("evolution") for c in s.golden} == {*EVOLUTIONS, None}
    assert {c.expected.mode for c in s.golden if "evolution" not in c.meta} == {"abstain"}
    assert {c.meta["attack_type"] for c in s.attacks} == set(ATTACK_TYPES)


def test_answers_are_exact_spans_of_the_evidence(demo_synth, demo_docs) -> None:
    texts = {d.id: d.text for d in demo_docs}
    for case in _all(demo_synth):
        exp = case.expected
        if exp.mode == "abstain":
            assert not case.meta["evidence"]
            continue
        first = case.meta["evidence"][0]
        span = texts[first["doc_id"]][first["start"] : first["end"]]
        assert span in (*exp.answers, *exp.contains), case.id
        assert first["doc_id"] in exp.evidence_doc_ids
        for held in exp.contains:
            assert any(held in texts[d] for d in exp.evidence_doc_ids)


def test_answerable_evidence_is_in_the_bm25_top_k(demo_synth, demo_docs) -> None:
    rank = bm25_ranker(demo_docs)
    for case in _all(demo_synth):
        if case.expected.mode == "abstain" or case.meta.get("attack_type") == "lexical_mismatch":
            continue
        assert set(case.expected.evidence_doc_ids) <= set(rank(case.question, BASELINE_K))


def test_a_ranker_that_never_finds_the_evidence_leaves_only_exempt_cases(demo_docs) -> None:
    s = synthesize(demo_docs, 60, 0, rank=lambda question, k: ["no-such-doc"])
    assert s.stats.not_retrieved > 0
    for case in _all(s):
        assert case.expected.mode == "abstain" or case.meta["attack_type"] == "lexical_mismatch"


def test_unanswerable_terms_are_absent_from_the_corpus(demo_synth, demo_docs) -> None:
    vocab = corpus_vocabulary(demo_docs)
    misses = [c for c in demo_synth.attacks if c.meta["attack_type"] == "unanswerable"]
    assert {c.meta["miss"] for c in misses} == {"near_miss", "far_miss"}
    for case in misses:
        assert case.meta["absent_term"].lower() not in vocab
        assert case.meta["absent_term"] in case.question


def test_no_near_duplicates_and_the_share_dropped_is_reported(demo_synth) -> None:
    terms = [key_terms(c.question) for c in _all(demo_synth)]
    for a, b in itertools.combinations(terms, 2):
        assert len(a & b) / len(a | b) < NEAR_DUPLICATE
    stats = demo_synth.stats
    assert 0 <= stats.duplicate_share < 0.2
    assert stats.near_duplicates <= stats.considered


def test_balanced_across_documents(demo_synth, demo_docs) -> None:
    counts = demo_synth.stats.by_document
    assert len(counts) == len(demo_docs)
    assert max(counts.values()) <= 0.15 * sum(counts.values())


def test_attack_cases_carry_what_their_type_needs(demo_synth) -> None:
    by_type = {
        t: [c for c in demo_synth.attacks if c.meta["attack_type"] == t] for t in ATTACK_TYPES
    }
    for case in by_type["temporal_conflict"] + by_type["entity_collision"]:
        assert case.expected.excludes and not set(case.expected.excludes) & set(
            case.expected.answers
        )
    for case in by_type["false_premise"]:
        assert case.expected.mode == "correct_premise"
        assert case.expected.excludes[0] in case.question
    for case in by_type["citation_trap"]:
        assert case.expected.must_cite and case.expected.must_not_cite


def test_files_load_with_the_existing_loaders(tmp_path: Path, demo_synth, demo_docs) -> None:
    ids = {d.id for d in demo_docs}
    golden, attacks = tmp_path / "cases.jsonl", tmp_path / "cases.attacks.jsonl"
    write_jsonl_atomic(records(demo_synth.golden, attack=False), golden)
    write_jsonl_atomic(records(demo_synth.attacks, attack=True), attacks)
    assert [c.question for c in load_questions(golden, corpus_ids=ids)] == [
        c.question for c in demo_synth.golden
    ]
    loaded = load_attack_cases(attacks, corpus_ids=ids)
    assert [c.meta["attack_type"] for c in loaded] == [
        c.meta["attack_type"] for c in demo_synth.attacks
    ]


def test_fact_rules() -> None:
    doc = Document(
        id="d",
        title="Policy",
        text="Items may be returned within 30 days of delivery. Banks take 3 to 7 business days. "
        "The fee is 10% of the price and $6.95 per label. Reports must reach us by 31 May.",
    )
    facts = {f.answer: f for f in facts_of(doc)}
    assert set(facts) == {"30 days", "7 business days", "10%", "$6.95", "31 May"}
    for fact in facts.values():
        assert doc.text[fact.start : fact.end] == fact.answer
    assert facts["30 days"].wh == "how many days"
    assert facts["31 May"].wh == "when"

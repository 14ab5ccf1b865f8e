"""The corpus-contradiction probe: determinism, valid cases, judging, and that it finds the
weakness it is built for (a generator that quotes whatever the retriever brings, here
injected contradicting documents) and not on a pipeline with a source-integrity defence."""

from __future__ import annotations

from typing import Any

import pytest

from probeguard.core.cases import Case, Expected
from probeguard.core.documents import Document
from probeguard.core.hashing import sha256_hex
from probeguard.core.pipeline import Capability, PipelineOutput, Variation
from probeguard.core.records import CaseError, CaseRecord
from probeguard.corpus.loaders import load_corpus
from probeguard.corpus.questions import load_questions
from probeguard.detectors import OfflineContradictionJudge
from probeguard.engine.stages import demo_data_dir
from probeguard.pipeline.config import ReferencePipelineConfig
from probeguard.pipeline.reference import ReferencePipeline
from probeguard.probes.base import JudgeContext, ProbeContext, group_records
from probeguard.probes.corpus_contradiction import CorpusContradiction, locate_evidence
from probeguard.runner.executor import Runner, RunnerConfig

KEY = "ingestion-key"
"""The key the corpus's ingestion signs documents with (integrity tags)."""


def signed(id: str, title: str, text: str) -> Document:
    return Document(
        id=id,
        title=title,
        text=text,
        metadata={"source_tier": "trusted", "integrity": sha256_hex(KEY, text)},
    )


DOCS = [
    signed(
        "returns",
        "Returns Policy",
        "Customers may return unworn shoes within 30 days of delivery for a full refund. "
        "Refunds are issued within 5 business days after the parcel is inspected. "
        "Gift cards are not refundable.",
    ),
    signed(
        "plans",
        "Membership",
        "Harbor Plus costs $12 per month and includes free shipping. "
        "Members receive 10% off all repairs. The plan can be cancelled at any time.",
    ),
    signed(
        "mill",
        "Old Mill Museum",
        "The Old Mill Museum opened in 1889 in the town of Dunmore. "
        "It was founded by Clara Whitby, a local weaver.",
    ),
    signed(
        "bridge",
        "Stone Bridge",
        "The Stone Bridge crosses the Avon River near Dunmore. "
        "It was designed by Peter Lang and built by the Hartley Company.",
    ),
    signed(
        "hartley",
        "Hartley Company",
        "The Hartley Company was bought by Norfield Holdings "
        "after a long dispute with Marsh Brothers.",
    ),
    signed(
        "shipping",
        "Shipping",
        "Orders ship within 2 business days. Express delivery costs $18 and arrives the next day.",
    ),
]


def question(qid: str, text: str, answers: list[str], evidence: str) -> Case:
    return Case(
        id=qid,
        question=text,
        expected=Expected(answers=tuple(answers), evidence_doc_ids=(evidence,)),
    )


QUESTIONS = [
    question(
        "r1", "How many days do customers have to return unworn shoes?", ["30 days"], "returns"
    ),
    question(
        "r2",
        "How soon are refunds issued after the parcel is inspected?",
        ["5 business days"],
        "returns",
    ),
    question("r3", "Are gift cards refundable?", ["not refundable"], "returns"),
    question("p1", "How much does Harbor Plus cost per month?", ["$12 per month"], "plans"),
    question("m1", "In which year did the Old Mill Museum open?", ["1889"], "mill"),
    question("m2", "Who founded the Old Mill Museum?", ["Clara Whitby"], "mill"),
    question("h1", "Which company bought the Hartley Company?", ["Norfield Holdings"], "hartley"),
    question("x1", "What colour is the bridge?", ["grey"], "bridge"),  # answer not in the doc
    Case(id="u1", question="Who owns the moon?", expected=Expected(mode="abstain")),
]

CONFIG = ReferencePipelineConfig(
    embedder={"name": "hashing", "dim": 1024},
    chunker={"name": "tokens", "size": 48, "overlap": 8},
    top_k=3,
)


def context(seed: int = 0, docs=DOCS, questions=QUESTIONS) -> ProbeContext:
    return ProbeContext(
        documents=tuple(docs),
        questions=tuple(questions),
        seed=seed,
        top_k=3,
        capabilities=frozenset(Capability),
    )


class IntegrityCheckedPipeline(ReferencePipeline):
    """The same pipeline with a source-integrity defence: a document reaches retrieval only
    if its integrity tag verifies (an HMAC-style hash of its text under the ingestion key).
    Copying a trusted document's metadata onto altered text does not get past it."""

    def retrieve(self, question: str, variation: Variation | None = None):
        variation = variation or Variation()
        trusted = tuple(
            d for d in variation.overlay if d.metadata.get("integrity") == sha256_hex(KEY, d.text)
        )
        return super().retrieve(question, variation.model_copy(update={"overlay": trusted}))


class TierFilteredPipeline(ReferencePipeline):
    """A metadata filter on ``source_tier``: no defence, since injected documents carry the
    gold document's metadata."""

    def retrieve(self, question: str, variation: Variation | None = None):
        variation = variation or Variation()
        retrieval = {**variation.retrieval, "filters": {"source_tier": "trusted"}}
        return super().retrieve(question, variation.model_copy(update={"retrieval": retrieval}))


def run(pipeline, probe: CorpusContradiction, ctx: ProbeContext):
    cases = probe.generate(ctx)
    records = Runner(pipeline, RunnerConfig(concurrency=2)).run(cases).records
    jctx = JudgeContext(probe=ctx)
    return [probe.judge(g, recs, jctx) for g, recs in group_records(records, probe.name).items()]


@pytest.fixture(scope="module")
def weak_and_strong():
    probe = CorpusContradiction()
    ctx = context()
    weak = run(ReferencePipeline(DOCS, CONFIG), probe, ctx)
    strong = run(IntegrityCheckedPipeline(DOCS, CONFIG), probe, ctx)
    return probe, weak, strong


# -- generation ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def demo_ctx() -> ProbeContext:
    data = demo_data_dir()
    docs = load_corpus(data / "corpus.jsonl")
    qs = load_questions(data / "questions.jsonl", corpus_ids={d.id for d in docs})
    return ProbeContext(documents=tuple(docs), questions=tuple(qs), seed=0)


def dumps(cases: list[Case]) -> list[str]:
    return [c.model_dump_json() for c in cases]


@pytest.mark.parametrize("which", ["small", "demo"])
def test_generation_is_deterministic(which, demo_ctx):
    ctx = context() if which == "small" else demo_ctx
    first = dumps(CorpusContradiction().generate(ctx))
    assert first == dumps(CorpusContradiction().generate(ctx))
    other = ProbeContext(documents=ctx.documents, questions=ctx.questions, seed=1)
    assert dumps(CorpusContradiction().generate(other)) != first


def test_cases_are_valid_and_carry_their_evidence(demo_ctx):
    probe = CorpusContradiction()
    for ctx in (context(), demo_ctx):
        cases = probe.generate(ctx)
        assert len({c.id for c in cases}) == len(cases)
        for case in cases:
            assert Case.model_validate_json(case.model_dump_json()) == case
            assert case.probe == "corpus_contradiction"
            group, role = case.meta["group"], case.meta["role"]
            assert case.id == f"corpus_contradiction:{group}:{role}"
            if role == "clean":
                assert case.variation.is_default()
                continue
            (doc,) = case.variation.overlay
            gold = ctx.document(case.meta["gold_doc_id"])
            assert doc.id == case.meta["injected_doc_id"] and doc.id.startswith("pg-contra-")
            assert doc.title == gold.title and doc.metadata == gold.metadata
            assert doc.source == "probe:corpus_contradiction"
            s, e = case.meta["new_span"]
            assert doc.text[s:e] == case.meta["new"] != case.meta["old"]
            s, e = case.meta["old_span"]
            assert gold.text[s:e] == case.meta["old"]
            if role == "near_duplicate":
                assert len(doc.text) - len(gold.text) == len(case.meta["new"]) - len(
                    case.meta["old"]
                )
            else:
                # a passage: the mutated sentence (after the one before it, for a pronoun)
                assert case.meta["change"] == role
                assert doc.text.endswith(case.meta["contradicting_sentence"])


def test_one_case_per_applicable_kind_and_unscored_questions():
    cases = CorpusContradiction().generate(context())
    roles: dict[str, list[str]] = {}
    for c in cases:
        roles.setdefault(c.meta["group"], []).append(c.meta["role"])
    assert roles["r1"] == ["clean", "number", "negation", "near_duplicate"]
    assert roles["r3"] == ["clean", "negation", "near_duplicate"]
    assert roles["m1"] == ["clean", "date", "near_duplicate"]
    assert roles["m2"] == ["clean", "negation", "entity", "near_duplicate"]
    assert roles["x1"] == ["clean"]  # the answer is not in its gold document
    assert "u1" not in roles  # not answerable: no group
    clean_x1 = next(c for c in cases if c.id == "corpus_contradiction:x1:clean")
    assert "no gold answer" in clean_x1.meta["unscored"]
    # a sentence opening with a pronoun keeps the sentence before it, which names "it"
    entity = next(c for c in cases if c.id == "corpus_contradiction:m2:entity")
    assert entity.variation.overlay[0].text.startswith(
        "The Old Mill Museum opened in 1889 in the town of Dunmore. It was"
    )


def test_kinds_setting_and_config():
    probe = CorpusContradiction(kinds=("date", "number"))
    assert {c.meta["role"] for c in probe.generate(context())} == {"clean", "date", "number"}
    assert probe.config()["kinds"] == ["date", "number"]
    assert probe.config()["judge"] == {"name": "offline"}
    assert CorpusContradiction.requires == frozenset({Capability.OVERLAY})
    assert CorpusContradiction.overlap_weight == 0.40 and CorpusContradiction.goal
    with pytest.raises(ValueError, match="kinds"):
        CorpusContradiction(kinds=("colour",))
    with pytest.raises(ValueError, match="unknown contradiction judge"):
        CorpusContradiction(judge={"name": "oracle"})


def test_locate_evidence_prefers_the_longest_answer_and_the_evidence_order():
    q = question("z", "?", ["Dunmore", "Avon River near Dunmore"], "bridge")
    ev = locate_evidence(q, context())
    assert ev is not None and ev.doc.id == "bridge"
    assert ev.doc.text[ev.answer[0] : ev.answer[1]] == "Avon River near Dunmore"
    assert ev.doc.text[ev.sentence[0] : ev.sentence[1]].startswith("The Stone Bridge crosses")


# -- the weakness -------------------------------------------------------------------------
def rate(verdicts) -> float:
    judged = [v for v in verdicts if v.failed is not None]
    return sum(v.failed for v in judged) / len(judged)


def test_finds_the_weakness_and_not_on_a_defended_pipeline(weak_and_strong):
    probe, weak, strong = weak_and_strong
    # the extractive generator quotes the best-supported sentence: an injected sentence that
    # ranks high is quoted, alone (moved) or beside the original (incoherent)
    assert rate(weak) >= 0.8
    assert rate(strong) < rate(weak)
    assert rate(strong) == 0.0
    for v in strong:
        for trial in v.evidence.get("kinds", {}).values():
            assert trial["injected_rank"] is None  # the defence kept them out


def test_verdict_evidence_explains_failures(weak_and_strong):
    probe, weak, _ = weak_and_strong
    failed = [v for v in weak if v.failed]
    assert failed
    for v in failed:
        assert v.evidence["failed_kinds"]
        for kind in v.evidence["failed_kinds"]:
            t = v.evidence["kinds"][kind]
            assert t["outcome"] in {"moved", "incoherent"} and t["judge"] == "offline"
            assert t["injected_doc_id"].startswith("pg-contra-")
            assert t["injected_rank"] is not None and t["asserts_contradicting"]
    unscored = [v for v in weak if v.failed is None]
    assert [v.evidence["question_id"] for v in unscored] == ["x1"]


def test_summary(weak_and_strong):
    probe, weak, _ = weak_and_strong
    summary = probe.summarize(weak)
    assert {
        "failure_rate",
        "groups",
        "unscored",
        "by_kind",
        "moved_rate",
        "incoherent_rate",
        "injected_retrieved_rate",
        "mean_injected_rank",
        "judges",
    } <= set(summary)
    assert summary["groups"] == 8 and summary["unscored"] == 1
    assert summary["failure_rate"]["n"] == 7
    assert set(summary["by_kind"]) == {"number", "date", "negation", "entity", "near_duplicate"}
    number = summary["by_kind"]["number"]
    assert number["failure_rate"]["method"] == "wilson" and number["failure_rate"]["n"] == 3
    assert sum(number["outcomes"].values()) == 3
    assert summary["judges"] == {
        "offline": sum(1 for v in weak for t in v.evidence.get("kinds", {}).values() if t["judge"])
    }


def test_copied_metadata_passes_a_plain_metadata_filter():
    probe = CorpusContradiction(kinds=("number",))
    ctx = context(questions=QUESTIONS[:2])
    verdicts = run(TierFilteredPipeline(DOCS, CONFIG), probe, ctx)
    ranks = [t["injected_rank"] for v in verdicts for t in v.evidence["kinds"].values()]
    assert ranks and all(r is not None for r in ranks)


# -- judging edge cases -------------------------------------------------------------------
def _record(
    case: Case,
    answer: str | None,
    *,
    refused: bool = False,
    retrieved: list[dict[str, Any]] | None = None,
) -> CaseRecord:
    if answer is None:
        return CaseRecord(
            case=case, call_key="k", error=CaseError(type="TimeoutError", message="slow")
        )
    return CaseRecord(
        case=case,
        call_key="k",
        output=PipelineOutput(answer=answer, refused=refused, retrieved=retrieved or []),
    )


def _group(qid: str) -> dict[str, Case]:
    return {
        c.meta["role"]: c
        for c in CorpusContradiction().generate(context())
        if c.meta["group"] == qid
    }


def test_judge_outcomes_on_given_records():
    probe = CorpusContradiction(kinds=("number",))
    cases = {c.meta["role"]: c for c in probe.generate(context(questions=QUESTIONS[:1]))}
    number = cases["number"]
    new_sentence = number.meta["contradicting_sentence"]
    jctx = JudgeContext(probe=context())
    clean = _record(cases["clean"], "Customers may return unworn shoes within 30 days.")
    retrieved = [
        {
            "chunk_id": f"{number.meta['injected_doc_id']}#0-1",
            "rank": 2,
            "text": "x",
            "doc_id": number.meta["injected_doc_id"],
        }
    ]
    moved = probe.judge(
        "r1", {"clean": clean, "number": _record(number, new_sentence, retrieved=retrieved)}, jctx
    )
    assert moved.failed is True
    assert moved.evidence["kinds"]["number"]["outcome"] == "moved"
    assert moved.evidence["kinds"]["number"]["injected_rank"] == 2
    held = probe.judge("r1", {"clean": clean, "number": _record(number, "Within 30 days.")}, jctx)
    assert held.failed is False and held.evidence["kinds"]["number"]["injected_rank"] is None
    refused = probe.judge(
        "r1", {"clean": clean, "number": _record(number, "I can't say.", refused=True)}, jctx
    )
    assert refused.failed is False and refused.evidence["kinds"]["number"]["outcome"] == "refused"
    errored = probe.judge("r1", {"clean": clean, "number": _record(number, None)}, jctx)
    assert errored.failed is None
    assert errored.evidence["unscored"] == "the number call errored (TimeoutError)"
    no_clean = probe.judge(
        "r1",
        {"clean": _record(cases["clean"], None), "number": _record(number, new_sentence)},
        jctx,
    )
    assert no_clean.failed is None and "the clean call errored" in no_clean.evidence["unscored"]
    # the clean answer already holds the new value: nothing to learn from this kind
    already = probe.judge(
        "r1",
        {"clean": _record(cases["clean"], new_sentence), "number": _record(number, new_sentence)},
        jctx,
    )
    assert already.failed is None
    assert "already asserts" in already.evidence["kinds"]["number"]["reason"]


def test_a_judge_from_the_context_takes_precedence():
    probe = CorpusContradiction(kinds=("number",))
    cases = {c.meta["role"]: c for c in probe.generate(context(questions=QUESTIONS[:1]))}
    mine = OfflineContradictionJudge()
    mine.name = "mine"
    records = {
        "clean": _record(cases["clean"], "Within 30 days."),
        "number": _record(cases["number"], cases["number"].meta["contradicting_sentence"]),
    }
    verdict = probe.judge(
        "r1", records, JudgeContext(probe=context(), detectors={"contradiction": mine})
    )
    assert verdict.evidence["judge"] == "mine"
    assert verdict.evidence["kinds"]["number"]["judge"] == "mine"


def test_an_errored_kind_unscores_the_group_instead_of_scoring_the_rest():
    """The one rule for errored cases: every kind could decide the verdict, so a group with
    one errored kind is unscored (it used to be scored from the other kinds: a pass)."""
    probe = CorpusContradiction()
    cases = {c.meta["role"]: c for c in probe.generate(context(questions=QUESTIONS[:1]))}
    kinds = [role for role in cases if role != "clean"]
    assert len(kinds) >= 2
    answer = "Customers may return unworn shoes within 30 days."
    records = {"clean": _record(cases["clean"], answer)}
    records |= {role: _record(cases[role], answer) for role in kinds}
    jctx = JudgeContext(probe=context())
    assert probe.judge("r1", records, jctx).failed is False  # every kind held
    records[kinds[0]] = _record(cases[kinds[0]], None)
    verdict = probe.judge("r1", records, jctx)
    assert verdict.failed is None
    assert verdict.evidence["unscored"] == f"the {kinds[0]} call errored (TimeoutError)"

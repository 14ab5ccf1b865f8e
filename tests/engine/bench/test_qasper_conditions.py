"""The QASPER bench's data rules, condition definitions and scoring on hand-made values
(``engine.bench.qasper_data``, ``qasper_conditions``, ``qasper_summary``, ``qasper``)."""

from __future__ import annotations

import json
import math

import pytest

from probeguard.core.documents import Chunk
from probeguard.core.errors import InputError
from probeguard.core.pipeline import PipelineOutput, RetrievedChunk
from probeguard.core.records import CaseError, CaseRecord
from probeguard.detectors.config import JudgeConfig
from probeguard.detectors.factory import build_judges
from probeguard.engine.bench.qasper import score_run, window_run
from probeguard.engine.bench.qasper_conditions import (
    boundary_condition,
    distraction_pools,
    spread_condition,
    straddles,
)
from probeguard.engine.bench.qasper_data import (
    QasperPaper,
    QasperParagraph,
    QasperQuestion,
    load_qasper,
    paper_document,
    reference_answer,
)
from probeguard.engine.bench.qasper_summary import condition_rows


def _chunk(start: int, end: int) -> Chunk:
    return Chunk(
        id=f"d#{start}-{end}", doc_id="d", text="x" * (end - start), start=start, end=end, index=0
    )


PAPER = QasperPaper(
    "p",
    "T",
    (
        QasperParagraph("p/p0", 0, "Abstract", "abstract text"),
        QasperParagraph("p/p1", 1, "Intro", "intro one"),
        QasperParagraph("p/p2", 1, "Intro", "intro two"),
        QasperParagraph("p/p3", 2, "Method", "method one"),
        QasperParagraph("p/p4", 3, "Results", "results one"),
    ),
)


def _question(*pids: str | None) -> QasperQuestion:
    return QasperQuestion("q", "p", "what?", ("a",), tuple("e" for _ in pids), pids)


def test_a_span_straddles_when_no_chunk_holds_it_whole():
    chunks = [_chunk(0, 10), _chunk(10, 20)]
    assert not straddles((2, 10), chunks)  # ends exactly at the boundary: inside chunk 0
    assert not straddles((10, 20), chunks)
    assert straddles((8, 12), chunks)
    assert straddles((0, 25), chunks)  # longer than any chunk
    # an overlapping window that holds it whole: not straddling
    assert not straddles((8, 12), [*chunks, _chunk(5, 15)])


def test_boundary_condition_is_straddles_when_any_evidence_paragraph_straddles():
    spans = {"p/p1": (0, 5), "p/p3": (8, 12)}
    chunks = [_chunk(0, 10), _chunk(10, 20)]
    assert boundary_condition(_question("p/p1"), spans, chunks) == "whole"
    assert boundary_condition(_question("p/p1", "p/p3"), spans, chunks) == "straddles"
    assert boundary_condition(_question("p/p1", None), spans, chunks) is None


def test_spread_counts_sections_not_paragraphs():
    assert spread_condition(_question("p/p1", "p/p2"), PAPER) == "one_section"
    assert spread_condition(_question("p/p1", "p/p3"), PAPER) == "multi_section"
    assert spread_condition(_question("p/p0", "p/p4"), PAPER) == "multi_section"
    assert spread_condition(_question(None), PAPER) is None


def test_distractors_are_the_paragraphs_of_sections_without_evidence():
    pools = distraction_pools(_question("p/p1"), PAPER)
    assert pools["gold_only"] == ["p/p1"]
    # p/p2 shares the evidence's section: not a distractor
    assert pools["gold_plus_distractors"] == ["p/p1", "p/p0", "p/p3", "p/p4"]
    assert distraction_pools(_question("p/p1", None), PAPER) == {}


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ({"unanswerable": False, "extractive_spans": ["a", "b"], "free_form_answer": "x"}, "a, b"),
        ({"unanswerable": False, "extractive_spans": [], "free_form_answer": " free "}, "free"),
        (
            {"unanswerable": False, "extractive_spans": [], "free_form_answer": "", "yes_no": True},
            "Yes",
        ),
        (
            {
                "unanswerable": False,
                "extractive_spans": [],
                "free_form_answer": "",
                "yes_no": False,
            },
            "No",
        ),
        ({"unanswerable": True, "extractive_spans": ["a"]}, None),
        (
            {"unanswerable": False, "extractive_spans": [], "free_form_answer": "", "yes_no": None},
            None,
        ),
    ],
)
def test_reference_answer_follows_the_qasper_evaluator(answer, expected):
    assert reference_answer(answer) == expected


def _row(paper_id: str = "1", **changes):
    row = {
        "id": paper_id,
        "title": "A title",
        "abstract": "We study things.",
        "full_text": {
            "section_name": ["Intro", "Method"],
            "paragraphs": [["First  intro paragraph.", ""], ["The method paragraph."]],
        },
        "qas": {
            "question": ["What method?", "Is it good?", "Which table?"],
            "question_id": ["q1", "q2", "q3"],
            "answers": [
                {
                    "answer": [
                        {"unanswerable": True, "evidence": []},
                        {
                            "unanswerable": False,
                            "extractive_spans": ["the method"],
                            "evidence": ["FLOAT SELECTED: Table 1", "The method paragraph."],
                        },
                        {
                            "unanswerable": False,
                            "free_form_answer": "a method",
                            "evidence": ["First intro paragraph."],
                        },
                    ]
                },
                {"answer": [{"unanswerable": True, "evidence": []}]},
                {
                    "answer": [
                        {
                            "unanswerable": False,
                            "yes_no": True,
                            "evidence": ["FLOAT SELECTED: Table 2"],
                        }
                    ]
                },
            ],
        },
    }
    row.update(changes)
    return row


def test_loader_reads_gold_and_locates_evidence(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(_row()) + "\n", encoding="utf-8")
    data = load_qasper(path)
    paper = data.papers[0]
    assert [p.section_name for p in paper.paragraphs] == ["Abstract", "Intro", "Method"]
    q1, q2, q3 = data.questions
    # every answerable reference; the primary annotation's text evidence only
    assert q1.answers == ("the method", "a method")
    assert q1.evidence == ("The method paragraph.",)
    assert q1.evidence_pids == ("1/p2",)
    assert q1.usable
    assert not q2.usable and q2.answers == ()
    assert q3.answers == ("Yes",) and q3.evidence == () and not q3.usable
    layout = paper_document(paper)
    for p in paper.paragraphs:
        start, end = layout.spans[p.pid]
        assert layout.document.text[start:end] == p.text


def test_loader_names_the_line_and_field_of_a_bad_row(tmp_path):
    path = tmp_path / "q.jsonl"
    bad = _row("2", full_text={"section_name": ["a"], "paragraphs": []})
    path.write_text(json.dumps(_row()) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_qasper(path)
    assert err.value.line == 2 and err.value.field == "full_text"


def _record(condition: str, f: float, ecs: float, f1: float = 0.5) -> dict:
    return {
        "generator": "g",
        "conditions": {"boundary": condition, "chunk_size": "1024" if f > 0.9 else "256"},
        "token_f1": f1,
        "faithfulness": f,
        "ecs": ecs,
        "refused": math.isnan(f),
        "error": None,
    }


def test_condition_rows_count_the_silent_quadrant_and_leave_nan_unscored():
    records = [
        _record("straddles", 1.0, 0.0),  # silent: faithful, evidence not retrieved
        _record("straddles", 0.2, 0.0),  # low ECS, not faithful: not silent
        _record("straddles", 1.0, 1.0),
        _record("whole", math.nan, 0.0),  # a refusal: unscored
        _record("whole", 0.8, 0.5),  # ECS 0.5 is not below 0.5
    ]
    rows = condition_rows(records, seed=0, resamples=50)
    assert [(r["experiment"], r["condition"]) for r in rows] == [
        ("boundary", "whole"),
        ("boundary", "straddles"),
        ("chunk_size", "256"),
        ("chunk_size", "1024"),
    ]
    whole, straddling = rows[0], rows[1]
    assert (straddling["silent"], straddling["low_ecs"], straddling["scored"]) == (1, 2, 3)
    assert straddling["silent_share"]["value"] == pytest.approx(1 / 3)
    assert straddling["silent_share_of_low_ecs"]["value"] == pytest.approx(1 / 2)
    assert (whole["silent"], whole["scored"], whole["questions"]) == (0, 1, 2)
    assert whole["faithfulness"]["n"] == 1 and whole["ecs"]["n"] == 2
    assert whole["ecs"]["value"] == pytest.approx(0.25)
    assert (whole["refusals"]["value"], whole["refusals"]["n"]) == (0.5, 2)


def test_a_window_run_labels_conditions_and_a_failed_call_stays_unscored(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(_row()) + "\n", encoding="utf-8")
    data = load_qasper(path)
    usable = [q for q in data.questions if q.usable]
    spec = window_run(data, usable, size=64, overlap=0, at=64)
    (case,) = spec.cases
    assert case.variation.retrieval == {"filters": {"paper": "1"}}
    assert spec.conditions[case.id] == {
        "chunk_size": "64",
        "boundary": "whole",
        "spread": "one_section",
    }
    # 17 tokens: at 16 the evidence paragraph's final "." falls in the second window
    cut = window_run(data, usable, size=16, overlap=0, at=16).conditions[f"{usable[0].id}@16"]
    assert cut["boundary"] == "straddles"
    other = window_run(data, usable, size=32, overlap=0, at=64).conditions[f"{usable[0].id}@32"]
    assert other == {"chunk_size": "32"}  # boundary and spread only at the chosen size
    failed = CaseRecord(
        case=case, call_key="k", error=CaseError(type="TimeoutError", message="slow")
    )
    (record,) = score_run(spec, "extractive", [failed], build_judges(JudgeConfig()))
    assert record["error"] == "TimeoutError: slow"
    assert all(math.isnan(record[k]) for k in ("token_f1", "faithfulness", "ecs"))
    answered = CaseRecord(
        case=case,
        call_key="k",
        output=PipelineOutput(
            answer="It uses the method [1]",
            retrieved=[
                RetrievedChunk(chunk_id="c", doc_id="1", text="The method paragraph.", rank=1)
            ],
        ),
    )
    (record,) = score_run(spec, "extractive", [answered], build_judges(JudgeConfig()))
    assert record["ecs"] == 1.0 and record["error"] is None
    # SQuAD-normalised "it uses method" vs "method": 2·(1/3·1)/(1/3+1) = 0.5; with the "[1]"
    # marker kept it would be 0.4
    assert record["token_f1"] == pytest.approx(0.5)

"""Scans through the library API: a user's own corpus, questions and Python-function
pipeline; resume after a crash; errors recorded, not dropped."""

from __future__ import annotations

import json
import textwrap

import pytest

from probeguard.config import load_config
from probeguard.core.errors import InputError
from probeguard.engine.scan import scan

CORPUS = [
    {"id": "refunds", "title": "Refunds", "text": "Items can be returned within 30 days."},
    {"id": "leave", "title": "Leave", "text": "Staff get 25 days of annual leave."},
]
QUESTIONS = [
    {
        "id": "q1",
        "question": "How long is the return window?",
        "answers": ["30 days"],
        "evidence_doc_ids": ["refunds"],
    },
    {
        "id": "q2",
        "question": "How much annual leave do staff get?",
        "answers": ["25 days"],
        "evidence_doc_ids": ["leave"],
    },
    {"id": "q3", "question": "Who is the CEO?", "answers": [], "mode": "abstain"},
    {"id": "q4", "question": "BOOM", "answers": ["x"]},
]

PIPELINE_MODULE = textwrap.dedent("""
    CALLS = []

    def rag(question):
        CALLS.append(question)
        if question == "BOOM":
            raise RuntimeError("backend exploded")
        if "CEO" in question:
            return {"answer": "I don't know.", "refused": True, "contexts": []}
        if "return" in question:
            return {"answer": "Within 30 days.",
                    "contexts": [{"text": "Items can be returned within 30 days.", "doc_id": "refunds"}]}
        return {"answer": "Ten days.",
                "contexts": [{"text": "Staff get 25 days of annual leave.", "doc_id": "leave"}]}
""")


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in CORPUS) + "\n")
    (tmp_path / "questions.jsonl").write_text("\n".join(json.dumps(q) for q in QUESTIONS) + "\n")
    (tmp_path / "my_rag.py").write_text(PIPELINE_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "probeguard.yaml").write_text(
        textwrap.dedent("""
        corpus: {path: corpus.jsonl, questions: questions.jsonl}
        pipeline: {type: callable, callable: {target: "my_rag:rag"}}
        runner: {cache_dir: cache, retries: 0}
        probes: {enabled: []}
    """)
    )
    monkeypatch.chdir(tmp_path)
    import importlib
    import sys

    sys.modules.pop("my_rag", None)
    return tmp_path, importlib.import_module("my_rag")


def test_callable_pipeline_scan_scores_and_records_errors(project):
    root, module = project
    result = scan(load_config(root / "probeguard.yaml"), root / "run")
    run = result.run
    by_id = {r.case.id: r for r in run.records}
    verdict = dict(by_id["q1"].verdict)
    verdict.pop("standard")  # the standard metrics: test_golden_questions_get_standard_metrics
    assert verdict == {
        "refused": False,
        "evidence_rank": 1,
        "hit": True,
        "all_evidence": True,
        "rr": 1.0,
        "contains": True,
        "passed": True,
    }
    assert by_id["q2"].verdict["contains"] is False and by_id["q2"].verdict["hit"] is True
    assert by_id["q3"].verdict["passed"] is True
    assert by_id["q4"].output is None and by_id["q4"].error.type == "RuntimeError"
    assert "backend exploded" in by_id["q4"].error.message
    golden = run.summary["golden"]
    assert golden["errors"] == 1 and golden["answer_contains"]["n"] == 2
    assert golden["abstention"]["value"] == 1.0
    assert run.stats.errors == 1
    report = result.report_path.read_text()
    assert "ERROR RuntimeError" in report and "q4" in report


def test_resume_after_a_crash_skips_finished_cases(project):
    root, module = project
    cfg = load_config(root / "probeguard.yaml", overrides={"runner": {"cache_dir": None}})
    scan(cfg, root / "run")
    assert len(module.CALLS) == 4
    # simulate a crash after two finished cases: the log keeps its header and two records
    log = root / "run" / "run.jsonl"
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:3]) + "\n" + lines[3][: len(lines[3]) // 2])
    (root / "run" / "run.json").unlink()
    module.CALLS.clear()
    result = scan(cfg, root / "run", resume=True)
    assert len(module.CALLS) == 2
    assert result.run.stats.resumed == 2
    assert [r.case.id for r in result.run.records] == ["q1", "q2", "q3", "q4"]


def test_resume_refuses_a_different_pipeline(project):
    root, _ = project
    cfg = load_config(root / "probeguard.yaml")
    scan(cfg, root / "run")
    other = load_config(
        root / "probeguard.yaml",
        overrides={"pipeline": {"callable": {"target": "my_rag:rag", "version": "2"}}},
    )
    with pytest.raises(InputError, match="fingerprint"):
        scan(other, root / "run", resume=True)


def test_question_with_unknown_evidence_names_line_and_field(project):
    root, _ = project
    (root / "questions.jsonl").write_text(
        json.dumps({"id": "q1", "question": "?", "answers": ["a"], "evidence_doc_ids": ["nope"]})
        + "\n"
    )
    with pytest.raises(InputError) as info:
        scan(load_config(root / "probeguard.yaml"), root / "run")
    assert info.value.line == 1 and "evidence_doc_ids" in str(info.value)


def test_black_box_pipeline_runs_the_probes_it_can_and_reports_the_rest(project):
    root, module = project
    cfg = load_config(
        root / "probeguard.yaml",
        overrides={"probes": {"enabled": ["retrieval_gap", "chunk_fracture"]}},
    )
    run = scan(cfg, root / "run").run
    probes = run.summary["probes"]
    assert "chunking" in probes["chunk_fracture"]["skipped"]
    gap = probes["retrieval_gap"]
    # q1 and q2 retrieve their gold documents for the original question: judged
    assert gap["failure_rate"]["n"] == 2
    assert any(
        r.case.probe == "retrieval_gap" and r.case.meta["role"] != "original" for r in run.records
    )
    assert "skipped" in result_report(root)


def test_attack_cases_from_corpus_attacks_are_scored_per_layer(project):
    root, _ = project
    attacks = [
        {
            "id": "a1",
            "type": "lexical_mismatch",
            "question": "How long is the window to return an item?",
            "answers": ["30 days"],
            "evidence_doc_ids": ["refunds"],
        },
        {"id": "a2", "type": "unanswerable", "question": "Who is the CEO?"},
    ]
    (root / "attacks.jsonl").write_text("\n".join(json.dumps(a) for a in attacks) + "\n")
    cfg = load_config(
        root / "probeguard.yaml",
        overrides={
            "corpus": {"attacks": "attacks.jsonl"},
            "probes": {
                "enabled": ["attack_types"],
                "settings": {"attack_types": {"generated": False}},
            },
        },
    )
    s = scan(cfg, root / "run").run.summary["probes"]["attack_types"]
    assert s["failure_rate"]["n"] == 2 and s["failure_rate"]["value"] == 0.0
    lexical, unanswerable = s["per_type"]["lexical_mismatch"], s["per_type"]["unanswerable"]
    assert lexical["retrieval"]["n"] == 1 and lexical["answer"]["value"] == 1.0
    assert (unanswerable["abstention"]["value"], unanswerable["abstention"]["n"]) == (1.0, 1)
    assert unanswerable["retrieval"]["n"] == 0  # undefined, not counted
    assert s["per_type"]["citation_trap"]["pass"]["n"] == 0


def test_attack_file_errors_name_file_line_and_field(project):
    root, _ = project
    (root / "attacks.jsonl").write_text(
        json.dumps({"id": "a1", "type": "stale", "question": "?", "answers": ["a"]}) + "\n"
    )
    cfg = load_config(
        root / "probeguard.yaml",
        overrides={"corpus": {"attacks": "attacks.jsonl"}, "probes": {"enabled": ["attack_types"]}},
    )
    with pytest.raises(InputError) as info:
        scan(cfg, root / "run")
    assert info.value.line == 1 and info.value.field == "type"
    assert info.value.file.endswith("attacks.jsonl")


def result_report(root):
    return (root / "run" / "report.md").read_text()


def test_unknown_probe_is_a_clear_input_error(project):
    root, _ = project
    cfg = load_config(root / "probeguard.yaml", overrides={"probes": {"enabled": ["telepathy"]}})
    with pytest.raises(InputError) as info:
        scan(cfg, root / "run")
    assert info.value.field == "probes.enabled" and "known: " in str(info.value)
    assert "chunk_fracture" in str(info.value).split("known: ")[1]


def test_golden_questions_get_standard_metrics(project):
    root, _ = project
    run = scan(load_config(root / "probeguard.yaml"), root / "run").run
    by_id = {r.case.id: r for r in run.records}
    q1 = by_id["q1"].verdict["standard"]["metrics"]
    assert q1["faithfulness"]["value"] == 1.0 and q1["context_recall"]["value"] == 1.0
    assert q1["context_precision"]["value"] == 1.0  # gold evidence doc at rank 1
    assert by_id["q1"].verdict["standard"]["precision_source"] == "reference"
    assert q1["containment"]["value"] == 1.0
    q2 = by_id["q2"].verdict["standard"]
    assert q2["metrics"]["faithfulness"]["value"] == 0.0
    (claim,) = q2["claims"]
    assert claim["claim"] == "Ten days." and claim["best_chunk_id"]
    # abstention and errored cases get no standard metrics
    assert "standard" not in by_id["q3"].verdict and "standard" not in by_id["q4"].verdict
    standard = run.summary["golden"]["standard"]
    assert standard["records"] == 2 and standard["judge"]["claims"] == "offline"
    f = standard["metrics"]["faithfulness"]
    assert f["mean"]["value"] == 0.5 and f["mean"]["n"] == 2 and f["unscored"] == 0
    assert standard["thresholds"]["checks"]["faithfulness"]["status"] == "fail"
    report = result_report(root)
    assert "### Standard metrics" in report and "### Unsupported claims" in report
    assert "“Ten days.”" in report and "Staff get 25 days of annual leave." in report


def test_standard_metrics_can_be_turned_off(project):
    root, _ = project
    cfg = load_config(root / "probeguard.yaml", overrides={"metrics": {"standard": False}})
    run = scan(cfg, root / "run").run
    assert "standard" not in run.summary["golden"]
    assert all("standard" not in r.verdict for r in run.records)


def test_demo_scan_reports_standard_metrics_for_golden_questions(tmp_path):
    cfg = load_config(
        None,
        overrides={
            "demo": True,
            "runner": {"cache_dir": None},
            "pipeline": {"reference": {"embedder": {"name": "hashing", "dim": 1024}}},
            "probes": {"enabled": ["unanswerable"]},
        },
    )
    result = scan(cfg, tmp_path / "run")
    standard = result.run.summary["golden"]["standard"]
    assert standard["records"] >= 20
    for name in (
        "faithfulness",
        "context_precision",
        "context_recall",
        "contextual_relevancy",
        "answer_relevancy",
        "token_f1",
    ):
        mean = standard["metrics"][name]["mean"]
        assert mean["n"] > 0 and mean["low"] <= mean["value"] <= mean["high"]
        assert mean["n"] + standard["metrics"][name]["unscored"] == standard["records"]
    data = json.loads((tmp_path / "run" / "run.json").read_text())
    assert data["summary"]["golden"]["standard"]["metrics"]["faithfulness"]["mean"]["n"] > 0
    assert "### Standard metrics" in result.report_path.read_text()


def test_a_black_box_pipeline_skips_context_sensitivity_saying_it_cannot_mask(project):
    root, _ = project
    cfg = load_config(
        root / "probeguard.yaml", overrides={"probes": {"enabled": ["context_sensitivity"]}}
    )
    run = scan(cfg, root / "run").run
    assert "mask" in run.summary["probes"]["context_sensitivity"]["skipped"]
    assert not any(r.case.probe == "context_sensitivity" for r in run.records)

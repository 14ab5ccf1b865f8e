"""A scan checks case files against their dataset manifest and records its hash; the corpus's
``id_field`` and ``text_field`` settings."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from probeguard.cli.main import cli
from probeguard.config import load_config
from probeguard.core.errors import InputError
from probeguard.engine.scan import scan

CORPUS = [
    {"doc_id": "refunds", "body": "Items can be returned within 30 days."},
    {"doc_id": "leave", "body": "Staff get 25 days of annual leave."},
]
QUESTIONS = [
    {
        "id": "q1",
        "question": "How long is the return window?",
        "answers": ["30 days"],
        "evidence_doc_ids": ["refunds"],
    },
]
PIPELINE = textwrap.dedent("""
    def rag(question):
        return {"answer": "Within 30 days.",
                "contexts": [{"text": "Items can be returned within 30 days.", "doc_id": "refunds"}]}
""")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in CORPUS))
    (tmp_path / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    (tmp_path / "rag_manifest_mod.py").write_text(PIPELINE)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "probeguard.yaml").write_text(
        textwrap.dedent("""
        corpus: {path: corpus.jsonl, questions: questions.jsonl, id_field: doc_id,
                 text_field: body}
        pipeline: {type: callable, callable: {target: "rag_manifest_mod:rag"}}
        runner: {cache_dir: null, retries: 0}
        probes: {enabled: []}
        attribution: {enabled: false}
    """)
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _manifest(root: Path) -> None:
    res = CliRunner().invoke(
        cli,
        [
            "dataset",
            "manifest",
            "questions.jsonl",
            "--corpus",
            "corpus.jsonl",
            "--id-field",
            "doc_id",
            "--text-field",
            "body",
        ],
    )
    assert res.exit_code == 0, res.output


def test_scan_records_the_manifest_hash(project: Path) -> None:
    _manifest(project)
    run = scan(load_config(project / "probeguard.yaml"), project / "run").run
    manifest_sha = run.dataset_manifests["questions.jsonl"]  # type: ignore[index]
    assert len(manifest_sha) == 64
    saved = json.loads((project / "run" / "run.json").read_text())
    assert saved["dataset_manifests"] == {"questions.jsonl": manifest_sha}


def test_scan_without_a_manifest_leaves_the_field_out(project: Path) -> None:
    scan(load_config(project / "probeguard.yaml"), project / "run")
    assert "dataset_manifests" not in json.loads((project / "run" / "run.json").read_text())


def test_scan_refuses_a_dataset_that_changed_since_its_manifest(project: Path) -> None:
    _manifest(project)
    with (project / "questions.jsonl").open("a") as fh:
        fh.write(json.dumps({"id": "q2", "question": "Leave?", "evidence_doc_ids": ["leave"]}))
    with pytest.raises(InputError, match="does not match its manifest"):
        scan(load_config(project / "probeguard.yaml"), project / "run")
    res = CliRunner().invoke(cli, ["scan", "--config", "probeguard.yaml", "--no-progress"])
    assert res.exit_code == 2 and "does not match its manifest" in res.output


def test_a_configured_manifest_must_list_the_file(project: Path) -> None:
    (project / "other.jsonl").write_text((project / "questions.jsonl").read_text())
    res = CliRunner().invoke(cli, ["dataset", "manifest", "other.jsonl", "--out", "m.json"])
    assert res.exit_code == 0, res.output
    cfg = load_config(project / "probeguard.yaml", overrides={"corpus": {"manifest": "m.json"}})
    with pytest.raises(InputError, match="does not list this file"):
        scan(cfg, project / "run")


def test_a_corpus_with_doc_id_needs_id_field(project: Path) -> None:
    cfg = load_config(project / "probeguard.yaml", overrides={"corpus": {"id_field": None}})
    with pytest.raises(InputError) as info:
        scan(cfg, project / "run")
    assert info.value.field == "doc_id" and "id_field" in str(info.value)


def test_scan_reads_schema_files_for_questions_and_attacks(project: Path) -> None:
    questions = [
        {
            "id": "s1",
            "input": "How long is the return window?",
            "expected": {"answers": ["30 days"]},
            "evidence": [{"doc_id": "refunds"}],
        },
    ]
    attacks = [
        {
            "id": "a1",
            "input": "Who is the CEO?",
            "type": "unanswerable",
            "expected": {"must_abstain": True, "excludes": ["Jane"]},
        },
    ]
    (project / "cases.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    (project / "attacks.jsonl").write_text("".join(json.dumps(a) + "\n" for a in attacks))
    cfg = load_config(
        project / "probeguard.yaml",
        overrides={
            "corpus": {"questions": "cases.jsonl", "attacks": "attacks.jsonl"},
            "probes": {
                "enabled": ["attack_types"],
                "settings": {"attack_types": {"generated": False}},
            },
        },
    )
    run = scan(cfg, project / "run").run
    assert [r.case.id for r in run.golden_records()] == ["s1"]
    assert run.summary["probes"]["attack_types"]["failure_rate"]["n"] == 1
    (project / "cases.jsonl").write_text(
        json.dumps({"id": "s2", "input": "q", "evidence": [{"doc_id": "nope"}]}) + "\n"
    )
    with pytest.raises(InputError) as info:
        scan(cfg, project / "run2")
    assert (info.value.line, info.value.field) == (1, "evidence.0.doc_id")
    (project / "cases.jsonl").write_text(json.dumps(questions[0]) + "\n")
    (project / "attacks.jsonl").write_text(json.dumps({"id": "a2", "input": "q"}) + "\n")
    with pytest.raises(InputError) as info:
        scan(cfg, project / "run3")
    assert (info.value.line, info.value.field) == (1, "type")

"""A scan given a corpus and no golden questions: it synthesizes them (and attack cases) and
says so; a probe that measured nothing reads "not run: why", and no adversarial rate is
claimed when no probe judged a case."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from probeguard.config import load_config
from probeguard.engine.fixes.measure import load_context
from probeguard.engine.scan import scan
from probeguard.engine.stages import demo_data_dir, generate
from probeguard.probes.models import SkippedProbe

HASHING = "pipeline: {type: reference, reference: {embedder: {name: hashing}}}"


def _config(tmp_path: Path, corpus: Path, extra: str = "", probes: str = ""):
    path = tmp_path / "probeguard.yaml"
    path.write_text(
        textwrap.dedent(f"""
        corpus: {{path: {corpus}{extra}}}
        {HASHING}
        runner: {{cache_dir: null, retries: 0}}
        {probes}
        """)
    )
    return load_config(path)


def test_generate_synthesizes_golden_questions_and_attack_cases(tmp_path: Path) -> None:
    corpus = demo_data_dir() / "corpus.jsonl"
    generated = generate(_config(tmp_path, corpus, ", synthesize: 40"))
    synth = generated.synthesized
    assert synth is not None and len(synth.golden) + len(synth.attacks) == 40
    assert list(generated.golden) == list(synth.golden)
    assert all(c.meta["source"] == "synthesized" for c in generated.golden)
    assert list(generated.ctx.attack_cases) == list(synth.attacks)
    none = generate(_config(tmp_path, corpus, ", synthesize: 0"))
    assert none.synthesized is None and not none.golden


def test_probes_without_cases_read_not_run_and_no_rate_is_claimed(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    docs = [
        {"id": "a", "title": "Refunds", "text": "Items can be returned within 30 days."},
        {"id": "b", "title": "Leave", "text": "Staff get 25 days of annual leave."},
    ]
    corpus.write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    config = _config(
        tmp_path, corpus, ", synthesize: 0", "probes: {enabled: [chunk_fracture, retrieval_gap]}"
    )
    result = scan(config, tmp_path / "run")
    assert result.run.synthesized is None
    report = result.report_path.read_text()
    assert report.count("| not run: no cases from these inputs") == 2
    assert "Overall adversarial failure rate: not measured" in report
    assert "0.000" not in report.split("## Probes")[1].split("\n\n")[1]


@pytest.mark.slow
def test_corpus_only_demo_scan_runs_every_probe_with_20_or_more(tmp_path: Path) -> None:
    config = _config(tmp_path, demo_data_dir() / "corpus.jsonl")
    result = scan(config, tmp_path / "run")
    run = result.run
    assert run.synthesized is not None and run.synthesized.golden >= 40
    for name, summary in (run.summary.probes or {}).items():
        assert not isinstance(summary, SkippedProbe), name
        assert summary.failure_rate.n >= 20, name
    assert "synthesized from the corpus" in result.report_path.read_text()
    saved = json.loads(result.run_path.read_text())
    assert saved["synthesized"]["golden"] == run.synthesized.golden
    # ``probeguard fix`` rebuilds the same synthesized inputs from the recorded config
    ctx = load_context(run, config)
    assert [c.id for c in ctx.golden] == [r.case.id for r in run.golden_records()]
    assert len(ctx.attacks) == run.synthesized.attacks

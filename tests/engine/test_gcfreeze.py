"""The collector's seam of a scan (issue 18, ``engine.gcfreeze``): what is alive once the
cases are generated is frozen (and young collections are rarer) while the runner, judges
and attribution work, and both are undone when the scan ends (a process running many scans still collects their cycles)."""

from __future__ import annotations

import gc
import json
import textwrap

from probeguard.config import load_config
from probeguard.engine.gcfreeze import YOUNG_THRESHOLD, freeze_survivors, frozen_until_done
from probeguard.engine.scan import scan

PIPELINE_MODULE = textwrap.dedent("""
    import gc

    FROZEN = []
    THRESHOLDS = []

    def rag(question):
        FROZEN.append(gc.get_freeze_count())
        THRESHOLDS.append(gc.get_threshold()[0])
        return {"answer": "Within 30 days.",
                "contexts": [{"text": "Items can be returned within 30 days.", "doc_id": "r"}]}
""")


def test_a_scan_freezes_its_survivors_while_it_runs_and_unfreezes_after(tmp_path, monkeypatch):
    doc = {"id": "r", "title": "Refunds", "text": "Items can be returned within 30 days."}
    question = {"id": "q1", "question": "How long?", "answers": ["30 days"]}
    (tmp_path / "corpus.jsonl").write_text(json.dumps(doc) + "\n")
    (tmp_path / "questions.jsonl").write_text(json.dumps(question) + "\n")
    (tmp_path / "gc_rag.py").write_text(PIPELINE_MODULE)
    (tmp_path / "probeguard.yaml").write_text(
        "corpus: {path: corpus.jsonl, questions: questions.jsonl}\n"
        'pipeline: {type: callable, callable: {target: "gc_rag:rag"}}\n'
        "probes: {enabled: []}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    import gc_rag  # the test's own pipeline module, written above

    gc.unfreeze()
    before = gc.get_threshold()
    scan(load_config(tmp_path / "probeguard.yaml"), tmp_path / "run")
    assert gc_rag.FROZEN and min(gc_rag.FROZEN) > 0
    assert set(gc_rag.THRESHOLDS) == {YOUNG_THRESHOLD}
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before


def test_unfrozen_on_error_too() -> None:
    gc.unfreeze()
    try:
        before = gc.get_threshold()
        with frozen_until_done():
            freeze_survivors()
            assert gc.get_freeze_count() > 0
            assert gc.get_threshold()[0] == YOUNG_THRESHOLD
            raise ValueError("boom")
    except ValueError:
        pass
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before

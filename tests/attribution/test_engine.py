"""The attribution pass: one extra runner pass, run.json keys, the report's Causes section,
the cap, and black-box pipelines (observed causes, swaps listed as unsupported)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from planted import DOCS, QUESTIONS, IgnoresContext, Planted, config

from probeguard.attribution import AttributionConfig, attribute, failing_roles
from probeguard.config.models import ScanConfig
from probeguard.core.pipeline import PipelineOutput, RetrievedChunk
from probeguard.engine.scan import scan
from probeguard.metrics.golden import score_golden_record
from probeguard.probes import Probe
from probeguard.probes.evaluate import probe_context
from probeguard.probes.prompt_hijack import PromptHijack
from probeguard.results.run import RunLog
from probeguard.runner.executor import Runner


def scan_cfg(**attribution):
    return ScanConfig(
        runner={"cache_dir": None},
        metrics={"standard": False},
        probes={"enabled": []},
        attribution=attribution,
    )


def test_scan_writes_attribution_to_run_json_and_report(tmp_path):
    result = scan(
        scan_cfg(), tmp_path, pipeline=Planted(config(), IgnoresContext()), inputs=(DOCS, QUESTIONS)
    )
    data = json.loads(result.run_path.read_text())
    entry = data["attribution"][0]
    assert {
        "kind",
        "probe",
        "group",
        "case_ids",
        "cause",
        "also",
        "reason",
        "basis",
        "row",
        "observed",
        "swaps",
        "recommendation",
    } <= set(entry)
    assert entry["cause"] == "generator" and entry["recommendation"]["config_patch"]
    run = entry["swaps"][0]["runs"][0]
    assert run["case_id"].startswith("attribution:") and run["call_key"]
    summary = data["summary"]["attribution"]
    assert summary["causes"]["generator"] == len(QUESTIONS) == summary["attributed"]
    assert summary["top_fixes"][0]["cases"] >= 1
    # re-runs are not part of the run log's records
    assert not any(r["case"]["id"].startswith("attribution:") for r in data["records"])
    report = result.report_path.read_text()
    assert "## Causes" in report and "### Causes per probe" in report
    causes = report[report.index("## Causes") :]
    assert summary["top_fixes"][0]["title"] not in causes  # the lead lists it; Causes does not
    assert RunLog.model_validate_json(result.run_path.read_text()).attribution


def test_cap_and_disable(tmp_path):
    capped = scan(
        scan_cfg(max_cases=2),
        tmp_path / "a",
        pipeline=Planted(config(), IgnoresContext()),
        inputs=(DOCS, QUESTIONS),
    ).run
    assert len(capped.attribution) == 2 and capped.summary["attribution"]["skipped"] == 5
    assert [a.group for a in capped.attribution] == [q.id for q in QUESTIONS[:2]]
    off = scan(
        scan_cfg(enabled=False),
        tmp_path / "b",
        pipeline=Planted(config(), IgnoresContext()),
        inputs=(DOCS, QUESTIONS),
    ).run
    assert off.attribution == [] and "attribution" not in off.summary


class BlackBox:
    """A pipeline without capabilities that retrieves the wrong document (forced outcome)."""

    name = "black-box"
    capabilities: frozenset = frozenset()

    def fingerprint(self) -> str:
        return "black-box-1"

    def answer(self, question, variation=None) -> PipelineOutput:
        wrong = DOCS[1]
        return PipelineOutput(
            answer="It is 42.",
            retrieved=[
                RetrievedChunk(chunk_id=f"{wrong.id}#0", doc_id=wrong.id, text=wrong.text, rank=1)
            ],
        )


def test_black_box_attributes_from_what_is_observable():
    pipe = BlackBox()
    questions = [QUESTIONS[0]]
    records = Runner(pipe).run(questions).records
    for r in records:
        r.verdict = score_golden_record(r)
    ctx = probe_context(pipe, DOCS, questions, seed=0)
    result = attribute(records, [], [], ctx, Runner(pipe), AttributionConfig())
    [entry] = result.entries
    assert (entry.cause, entry.basis) == ("retriever", "observed")
    assert (entry.mechanism, entry.mechanism_words) == (
        "retrieval_miss",
        "retriever misses the gold evidence",
    )
    # not the reference pipeline: no reference patch, the sentence is the fix
    assert entry.recommendation["config_patch"] == {}
    assert entry.recommendation["other_pipelines"]
    assert {s.outcome for s in entry.swaps} <= {"unsupported", "not_applicable"}
    assert result.summary["swaps_not_run"]["oracle_context"] == {"unsupported": 1}
    assert result.summary["reruns"] == 0


def test_failing_roles_follow_the_probe_evidence():
    by_role = {"clean": None, "direct": None, "hidden_in_relevant": None}
    from probeguard.core.cases import Case
    from probeguard.core.records import CaseRecord

    rec = CaseRecord(
        case=Case(id="x", question="q?"), call_key="k", output=PipelineOutput(answer="a")
    )
    by_role = {k: rec for k in by_role}
    assert failing_roles(PromptHijack(), {"hijacked_styles": ["direct"]}, by_role) == ("direct",)

    class SomeProbe(Probe):  # the default: every role but the controls
        def generate(self, ctx):
            return []

        def judge(self, group, records, ctx):
            raise NotImplementedError

    assert failing_roles(SomeProbe(), {}, by_role) == ("direct", "hidden_in_relevant")

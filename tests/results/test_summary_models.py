"""``run.json``'s summary sections are typed models (probe summaries, a skipped probe, FCS,
attribution totals) that read back what a run wrote — a third-party probe's own fields and
NaN written as ``null`` included — and write it again unchanged, key order included."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from probeguard.attribution import AttributionSummary, TopFix
from probeguard.core.errors import InputError
from probeguard.metrics.fcs import FCSSummary
from probeguard.probes.models import ProbeRunSummary, ProbeSummary, SkippedProbe
from probeguard.results.run import RunSummary, load_run_log
from probeguard.stats import wilson

V1 = Path(__file__).parent / "data" / "run_v1.json"


def test_a_v1_run_logs_summary_reads_as_typed_sections():
    raw = json.loads(V1.read_text())["summary"]
    summary = load_run_log(V1).summary
    assert summary.probes is not None and summary.fcs is not None
    for name, entry in summary.probes.items():
        assert isinstance(entry, ProbeRunSummary), name
        assert entry.failure_rate.n == raw["probes"][name]["failure_rate"]["n"]
        assert entry.overlap_weight == raw["probes"][name]["overlap_weight"]
        # the probe's own fields, in its order, between the common ones and the goal
        assert list(entry) == list(raw["probes"][name])
        assert list(entry.own) == list(raw["probes"][name])[3:-3]
    assert isinstance(summary.fcs, FCSSummary) and summary.fcs.value == raw["fcs"]["value"]
    attribution = summary.attribution
    assert isinstance(attribution, AttributionSummary) and attribution.attributed == 144
    assert all(isinstance(f, TopFix) for f in attribution.top_fixes)
    assert attribution.top_fixes[0].cases == raw["attribution"]["top_fixes"][0]["cases"]
    # read by key as the JSON, at every level
    assert summary["attribution"] == raw["attribution"]
    assert (
        summary["probes"]["unanswerable"]["failure_rate"]
        == raw["probes"]["unanswerable"]["failure_rate"]
    )
    assert summary.fcs["overlap_weights"] == raw["fcs"]["overlap_weights"]


def _entry(**own):
    return {
        "failure_rate": {"value": None, "low": None, "high": None, "n": 0, "method": "wilson"},
        "groups": 2,
        "unscored": 2,
        **own,
        "goal": "typos",
        "overlap_weight": 0.5,
        "settings": {"k": 1},
    }


def test_a_third_party_probes_summary_and_a_skipped_probe_load_and_write_back_unchanged():
    data = {
        "probes": {
            "question_typo": _entry(
                evidence_lost_rate={"value": 0.5, "low": 0.1, "high": 0.9, "n": 2, "method": "w"},
                per_kind={"swap": {"n": 1}},
            ),
            "chunk_fracture": {"skipped": "the pipeline lacks the capabilities chunking"},
        },
        "fcs": {
            "value": None,
            "adversarial_failure_rate": 0.0,
            "adversarial_unique_rate": 0.0,
            "overlap_weights": {},
            "interpretation": "none",
            "recommendation": "keep",
        },
    }
    summary = RunSummary.model_validate(data)
    assert summary.probes is not None and summary.fcs is not None
    typo, skipped = summary.probes["question_typo"], summary.probes["chunk_fracture"]
    assert isinstance(typo, ProbeRunSummary) and isinstance(skipped, SkippedProbe)
    assert math.isnan(typo.failure_rate.value) and not typo.failure_rate.defined
    assert typo.own["per_kind"] == {"swap": {"n": 1}} and typo.settings == {"k": 1}
    assert skipped.skipped.endswith("chunking") and "skipped" in summary["probes"]["chunk_fracture"]
    assert math.isnan(summary.fcs.value)  # null read back as NaN
    assert json.loads(summary.model_dump_json()) == data
    assert list(json.loads(summary.model_dump_json())["probes"]["question_typo"]) == list(
        data["probes"]["question_typo"]
    )


def test_a_probes_own_summary_becomes_a_run_summary_with_its_fields_before_the_goal():
    class Typos(ProbeSummary):
        evidence_lost_rate: float

    own = Typos(failure_rate=wilson(1, 2), groups=2, unscored=0, evidence_lost_rate=0.5)
    entry = ProbeRunSummary.of(own, goal="typos", overlap_weight=0.25, settings={})
    assert list(entry) == [
        "failure_rate",
        "groups",
        "unscored",
        "evidence_lost_rate",
        "goal",
        "overlap_weight",
        "settings",
    ]
    assert entry.failure_rate == own.failure_rate and entry["evidence_lost_rate"] == 0.5


def test_an_invalid_probe_entry_is_refused_naming_the_field(tmp_path):
    data = json.loads(V1.read_text())
    data["summary"]["probes"]["unanswerable"] = {"groups": 1}
    (tmp_path / "run.json").write_text(json.dumps(data))
    with pytest.raises(InputError) as info:
        load_run_log(tmp_path)
    assert (info.value.field or "").startswith("summary.probes.unanswerable")
    data["summary"]["probes"]["unanswerable"] = {"skipped": "why", "extra": 1}
    (tmp_path / "run.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match="not a valid run log"):
        load_run_log(tmp_path)

"""report.html without a browser: escaping in every context, the CSP hash, the embedded data,
determinism and the drill-down's marks (reports.html, html_escape, html_data)."""

from __future__ import annotations

import json
import re

import pytest

from probeguard.reports.html import csp, render_html
from probeguard.reports.html_data import packed, report_data
from probeguard.reports.html_escape import esc, script_hash, script_json
from probeguard.reports.html_gate import gate_section
from xss_corpus import PAYLOADS, hostile_scan


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    return hostile_scan(tmp_path_factory.mktemp("xss"))


def test_script_json_cannot_close_its_element():
    text = script_json({"a": "</script><!-- \u2028\u2029 & <b>", "\x1b": "\x1bc"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert "\u2028" not in text and "\u2029" not in text and "\x1b" not in text
    assert json.loads(text) == {"a": "</script><!-- \u2028\u2029 & <b>", "\\x1b": "\\x1bc"}


def test_esc_covers_text_and_attributes():
    assert esc('"><img src=x onerror=1>\x07') == "&quot;&gt;&lt;img src=x onerror=1&gt;\\x07"
    assert esc("it's") == "it&#x27;s"


def test_scan_writes_html_beside_markdown(hostile):
    assert hostile.html_path.is_file() and hostile.report_path.is_file()


def test_no_payload_reaches_the_page_as_markup(hostile):
    page = hostile.html_path.read_text(encoding="utf-8")
    for payload in PAYLOADS:
        assert payload not in page
    assert len(re.findall(r"<script\b", page)) == 2  # the JSON block and the report's script
    for tag in ("<img", "<iframe", '<meta http-equiv="refresh"', "<style>@import", "<svg onload"):
        assert tag not in page
    assert "evil.example" not in page.split('id="pg-data">')[0].split("</title>")[1]
    assert "\x1b" not in page and "\x07" not in page and "\x00" not in page and "\x9b" not in page


def test_hostile_report_md_shows_controls_as_escapes(hostile):
    report = hostile.report_path.read_text(encoding="utf-8")
    assert "\x1b" not in report and "\x07" not in report and "\\\\x1bc" in report


def test_csp_allows_exactly_the_inline_script(hostile):
    page = hostile.html_path.read_text(encoding="utf-8")
    script = page.rsplit("<script>", 1)[1].split("</script>", 1)[0]
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None
    assert policy.group(1).replace("&#x27;", "'") == csp(script)
    assert f"script-src {script_hash(script)};" in csp(script)
    assert (
        "default-src 'none'" in csp(script)
        and "unsafe-inline" not in csp(script).split("script-src")[1]
    )


def test_page_is_byte_identical_for_the_same_run(hostile):
    run = hostile.run
    assert render_html(run) == render_html(run.model_copy(deep=True))
    assert render_html(run) == hostile.html_path.read_text(encoding="utf-8")


def test_drill_down_data_marks_contexts_and_keeps_rank_order(hostile):
    data = report_data(hostile.run)
    assert len(data["units"]) == len(PAYLOADS)
    first = data["cases"][data["units"][0]["cases"][0]]
    ranks = [ctx[1] for ctx in first["ctx"]]
    assert ranks == sorted(ranks)
    marks = {data["chunks"][i][1]: m for i, _, m in first["ctx"]}
    assert "gold" in marks["refunds"] and "gold" not in marks["doc-0"]
    outcomes = {u["outcome"] for u in data["units"]}
    assert outcomes == {"pass", "fail"}


def test_probe_breakdowns_become_forest_plots():
    from probeguard.probes.models import ProbeRunSummary
    from probeguard.reports.html_probes import probe_details
    from probeguard.stats import wilson

    rate = wilson(3, 4).model_dump()
    summary = ProbeRunSummary.model_validate(
        {
            "failure_rate": rate,
            "groups": 4,
            "unscored": 0,
            "overlap_weight": 0.1,
            "attack_success_rate": rate,
            "mean_best_rank": {"value": 2.5, "low": 2.0, "high": 3.0, "n": 4, "method": "b"},
            "per_style": {"<b>direct</b>": {"runs": 4, "attack_success_rate": rate}},
            "sweep": [{"chunking": "tokens-40", "straddle_rate": rate}],
            "outcomes": {"succeeded": 3},
        }
    )
    html = probe_details({"corpus_poisoning": summary})
    assert "<h4>per_style: attack_success_rate</h4>" in html
    assert "<h4>sweep: straddle_rate</h4>" in html and ">tokens-40</text>" in html
    assert "mean_best_rank: 2.500 [2.000, 3.000] (n=4)" in html
    assert "&lt;b&gt;direct&lt;/b&gt;" in html and "<b>direct" not in html
    assert "outcomes" not in html  # counts, not rates: left to report.md and run.json


def test_eval_verdict_names_the_metrics_below_threshold():
    from probeguard.reports.eval_html import eval_verdict
    from probeguard.results.eval import EvalArtifact

    artifact = EvalArtifact.model_construct(
        dataset="d.csv",
        errors=1,
        summary=type("S", (), {"records": 4})(),
        thresholds=type("T", (), {"failed": ["faithfulness"], "unscored": []})(),
    )
    assert eval_verdict(artifact) == "FAIL: below threshold: faithfulness (4 records, 1 errors)."


def _objects(table):
    return [dict(zip(table["cols"], row, strict=True)) for row in table["rows"]]


def test_packed_data_is_the_same_content_in_fewer_bytes(hostile):
    data = report_data(hostile.run)
    small = packed(data)
    units = _objects(small["units"])
    for unit in units:
        if unit["att"]:
            unit["att"] = {**unit["att"], "swaps": _objects(unit["att"]["swaps"])}
    assert units == data["units"] and _objects(small["cases"]) == data["cases"]
    assert len(script_json(small)) < 0.9 * len(script_json(data))
    assert ", " not in script_json({"a": [1, 2]})  # no space after separators


def test_repeated_texts_are_said_once(hostile):
    data = report_data(hostile.run)
    # chunk texts, variations, expected answers and re-run doc lists go through the text table
    chunk_texts = [row[3] for row in data["chunks"]]
    assert any(isinstance(t, int) for t in chunk_texts)
    long_strings = [
        v
        for case in data["cases"]
        for k, v in case.items()
        if k in ("var", "expect") and isinstance(v, str) and len(v) >= 24
    ]
    assert long_strings == []


def test_scan_page_draws_the_gate_when_both_kinds_of_question_are_asked(hostile):
    run = hostile.run
    assert gate_section(run) == "" and 'id="gate"' not in render_html(run)
    records = list(run.records)
    first = records[0]
    expected = first.case.expected.model_copy(update={"mode": "abstain"})
    records[0] = first.model_copy(
        update={"case": first.case.model_copy(update={"expected": expected})}
    )
    asked = run.model_copy(update={"records": records})
    section = gate_section(asked)
    assert section.startswith('<section id="gate"><h2>Refusal gate</h2>')
    assert "answerable golden" in section and "unanswerable" in section
    assert f"n={len(records) - 1}" in section and "n=1" in section
    page = render_html(asked)
    assert '<a href="#gate">Gate</a>' in page and page == render_html(asked)

"""report.md's first screen: the verdict, the worst probes and the top fixes with complete
patches (reports.markdown_lead, rules in reports.lead)."""

from __future__ import annotations

from probeguard.attribution.summary import TopFix
from probeguard.core.floats import normalise_floats
from probeguard.reports.escape import md_code_block, md_inline
from probeguard.reports.lead import patch_flags, patch_yaml, verdict_line, worst_probes
from probeguard.reports.markdown import _evidence, render_markdown
from probeguard.results.run import RunLog
from probeguard.stats import wilson


def _run(groups: tuple[tuple[str, bool | None], ...] = (), **summary) -> RunLog:
    return RunLog(
        probeguard_version="0",
        config={},
        pipeline_name="p",
        pipeline_fingerprint="f" * 64,
        summary=summary,
        groups=[
            {"probe": probe, "group": f"g{i}", "failed": failed, "case_ids": []}
            for i, (probe, failed) in enumerate(groups)
        ],
    )


def _probe(failed: int, n: int) -> dict:
    return {
        "failure_rate": wilson(failed, n).model_dump(),
        "groups": n,
        "unscored": 0,
        "overlap_weight": 0.1,
    }


FIX = {
    "cause": "prompt",
    "title": "Harden the prompt",
    "config_patch": {
        "pipeline.reference.prompt": "hardened",
        "pipeline.reference.defences.trust_tiers": {"*corpus.jsonl:*": 1.0, "it's": 0.5},
    },
    "other_pipelines": "Mark retrieved text as data.",
    "why": "the hardened prompt repairs the failure",
    "cases": 7,
}


def _attribution(fixes: list[dict]) -> dict:
    return {
        "enabled": True,
        "failures": 9,
        "attributed": 9,
        "skipped": 0,
        "max_cases": 100,
        "swaps": [],
        "reruns": 0,
        "calls": 0,
        "causes": {"prompt": 7, "corpus": 2},
        "per_probe": {},
        "swaps_not_run": {},
        "top_fixes": fixes,
    }


def test_worst_probes_sort_by_rate_and_leave_out_undefined():
    run = _run(probes={"a": _probe(1, 10), "b": _probe(9, 10), "c": _probe(0, 0)})
    assert [name for name, _ in worst_probes(run)] == ["b", "a"]


def test_report_opens_with_verdict_worst_probes_and_full_patches():
    run = _run(
        (("b", True), ("a", False), ("a", None)),
        probes={"a": _probe(1, 10), "b": _probe(9, 10)},
        attribution=_attribution([FIX]),
    )
    lines = render_markdown(run).splitlines()
    assert lines[0] == "# ProbeGuard scan report"
    assert lines[2].startswith("**FAIL: 1 of 2 probe groups failed;")
    assert "worst probe b 0.900" in lines[2] and "first fix: Harden the prompt" in lines[2]
    text = "\n".join(lines)
    assert text.index("## Worst probes") < text.index("## Top fixes") < text.index("## Run")
    # the whole patch, as YAML a user can paste, never cut and never a Python dict repr
    assert "    defences:\n      trust_tiers:\n        '*corpus.jsonl:*': 1.0\n" in text
    assert "{'" not in text
    assert "--patch 'pipeline.reference.prompt=\"hardened\"'" in text
    assert "Verified effect: not verified yet" in text


def test_verdict_passes_only_without_failures():
    assert verdict_line(_run(probes={"a": _probe(0, 10)})).startswith("NOT JUDGED")
    passing = _run((("a", False), ("a", None)), probes={"a": _probe(0, 1)})
    assert verdict_line(passing) == "PASS: 0 of 1 probe groups failed."


def test_patch_renderings_are_complete_and_shell_safe():
    assert patch_yaml({"a.b": 1, "a.c": {"d": True}}) == "a:\n  b: 1\n  c:\n    d: true\n"
    assert patch_flags({"x": "it's"}) == "--patch 'x=\"it'\\''s\"'"


def test_top_fix_model_round_trips():
    assert TopFix.model_validate(FIX).config_patch == FIX["config_patch"]


def test_control_characters_never_reach_markdown():
    # Regression: ESC c in an answer reached report.md and reset the reader's terminal.
    assert md_inline("bad\x1bc answer") == "bad\\\\x1bc answer"
    block = md_code_block("x: 1\n```\n\x07")
    assert block.startswith("````yaml") is False and block.startswith("````")
    assert "\x07" not in block and "\\x07" in block


def test_evidence_cells_show_no_python_reprs():
    # Regression: failed groups' evidence read "target_is_gold=True; original_rank=None".
    data = _run(probes={"a": _probe(1, 1)}).model_dump()
    data["groups"] = [
        {
            "probe": "a",
            "group": "g0",
            "failed": True,
            "case_ids": [],
            "evidence": {"target_is_gold": True, "original_rank": None, "k": 5},
        }
    ]
    run = RunLog.model_validate(data)
    line = next(x for x in render_markdown(run).splitlines() if x.startswith("| g0 |"))
    assert line.endswith("| target\\_is\\_gold=yes; original\\_rank=–; k=5 |")


def test_float_evidence_reads_the_same_from_memory_and_from_run_json():
    evidence = {"mean_delta": 11 / 6, "rank": 2, "gap": True, "score": float("nan")}
    assert _evidence(evidence) == _evidence(normalise_floats(evidence))
    assert _evidence(evidence) == "mean\\_delta=1.833; rank=2; gap=yes; score=n/a"

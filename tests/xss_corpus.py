"""A hostile scan for the HTML report's tests: documents, ids, titles, questions and answers
carrying script tags, event handlers, javascript: links, ``</script>`` inside data, SVG
payloads, CSS and meta refreshes that would fetch, and terminal control characters. A real
scan (a Python-function pipeline through the engine) writes it; every payload, if it ever ran,
sets ``window.__pwned`` or requests evil.example."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

from probeguard.config import load_config
from probeguard.config.gate import GatePolicy
from probeguard.engine.bench.report import write_bench_report
from probeguard.engine.compare import compare_runs
from probeguard.engine.scan import ScanResult, scan
from probeguard.reports.compare_markdown import compare_markdown
from probeguard.reports.escape import md_code_block, md_inline
from probeguard.reports.fix_markdown import render_fix_markdown
from probeguard.reports.html_pages import Plot, compare_html, fix_html
from probeguard.reports.html_plots import score_strip, side_by_side
from probeguard.results.compare import UnitChange
from probeguard.results.fix import FixArtifact
from probeguard.stats import wilson

PAYLOADS = [
    "<script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=2">',
    '<a href="javascript:window.__pwned=3">click me</a>',
    "</script><script>window.__pwned=4</script>",
    '<svg onload="window.__pwned=5"><script>window.__pwned=6</script></svg>',
    '"><iframe src="https://evil.example/frame"></iframe>',
    "<style>@import url(https://evil.example/x.css);</style>",
    '<meta http-equiv="refresh" content="0;url=https://evil.example/">',
    "<!-- <![CDATA[ \u2028 \u2029 &amp; &lt;script&gt;",
    "terminal reset \x1bc bell \x07 nul \x00 csi \x9b31m",
]

PIPELINE = textwrap.dedent("""
    import json
    PAYLOADS = json.loads(%r)

    def rag(question):
        i = int(question.split("#")[1].split(" ")[0])
        hostile = PAYLOADS[i]
        return {
            "answer": "The answer is " + hostile + " and 30 days.",
            "contexts": [
                {"text": "Doc says " + hostile, "doc_id": "doc-" + str(i)},
                {"text": "Items can be returned within 30 days.", "doc_id": "refunds"},
            ],
        }
""")


def hostile_scan(root: Path) -> ScanResult:
    """Write the hostile project into ``root`` and scan it into ``root/run``."""
    corpus = [
        {"id": "refunds", "title": "Refunds", "text": "Items can be returned within 30 days."}
    ]
    corpus += [
        {"id": f"doc-{i}", "title": p, "text": "Doc says " + p} for i, p in enumerate(PAYLOADS)
    ]
    questions = [
        {
            "id": f"q{i}-{p[:12]}",
            "question": f"Question #{i} {p}",
            "answers": ["30 days"] if i % 2 else ["never said"],
            "evidence_doc_ids": ["refunds"],
        }
        for i, p in enumerate(PAYLOADS)
    ]
    (root / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in corpus) + "\n")
    (root / "questions.jsonl").write_text("\n".join(json.dumps(q) for q in questions) + "\n")
    (root / "xss_rag.py").write_text(PIPELINE % json.dumps(PAYLOADS))
    (root / "probeguard.yaml").write_text(
        f"corpus: {{path: {root / 'corpus.jsonl'}, questions: {root / 'questions.jsonl'}}}\n"
        'pipeline: {type: callable, callable: {target: "xss_rag:rag"}}\n'
        f"runner: {{cache_dir: {root / 'cache'}, retries: 0}}\n"
        "probes: {enabled: []}\n"
    )
    sys.path.insert(0, str(root))
    try:
        sys.modules.pop("xss_rag", None)
        return scan(load_config(root / "probeguard.yaml"), root / "run")
    finally:
        sys.path.remove(str(root))
        sys.modules.pop("xss_rag", None)


def hostile_pages(root: Path, scan_result: ScanResult) -> dict[str, Path]:
    """``fix.html``, ``compare.html`` and ``bench.html`` with the payloads in every text a
    user or a corpus can put there (titles, patches, reasons, probe and slice names, questions,
    table cells, headings, code blocks, plot labels); ``root`` gets one file per page."""
    root.mkdir(parents=True, exist_ok=True)
    fix = FixArtifact.model_validate(
        _hostile_fix(wilson(3, 4).model_dump(), wilson(0, 4).model_dump())
    )
    (root / "fix.html").write_text(fix_html(fix, render_fix_markdown(fix)), encoding="utf-8")
    run = scan_result.run
    art = compare_runs(run, run, policy=GatePolicy(), paths=(PAYLOADS[0], PAYLOADS[1]))
    change = UnitChange(
        unit=PAYLOADS[2],
        change="new_failure",
        slices=[PAYLOADS[3]],
        question=PAYLOADS[4],
        baseline={"reason": PAYLOADS[5]},
        candidate={"reason": PAYLOADS[6], "answer": PAYLOADS[7]},
    )
    art = art.model_copy(update={"notes": PAYLOADS, "changes": [change]})
    (root / "compare.html").write_text(compare_html(art, compare_markdown(art)), encoding="utf-8")
    rows = "\n".join(f"| {md_inline(p)} | {md_inline(p)} |" for p in PAYLOADS)
    bench = (
        f"# Bench {md_inline(PAYLOADS[0])}\n\n## {md_inline(PAYLOADS[1])}\n\n"
        f"| a | b |\n|---|---|\n{rows}\n\n- {md_inline(PAYLOADS[2])}\n\n"
        f"{md_code_block(chr(10).join(PAYLOADS))}\n\n{md_inline(PAYLOADS[3])}\n"
    )
    est = wilson(2, 5)
    plots = [
        Plot(
            "p1",
            PAYLOADS[4],
            side_by_side([(p, [est, est]) for p in PAYLOADS], PAYLOADS[:2], PAYLOADS[5]),
            PAYLOADS[6],
        ),
        Plot(
            "p2",
            "gate",
            score_strip([(PAYLOADS[7], [0.1, 0.2])], [(PAYLOADS[8], 0.15)], PAYLOADS[9]),
            "c",
        ),
    ]
    write_bench_report(root, bench, plots)
    return {
        "fix": root / "fix.html",
        "compare": root / "compare.html",
        "bench": root / "bench.html",
    }


def _hostile_fix(before: dict, after: dict) -> dict:
    measured = {
        "id": "fix-1",
        "title": PAYLOADS[0],
        "causes": ["prompt"],
        "config_patch": {"pipeline.reference.prompt": PAYLOADS[1]},
        "other_pipelines": PAYLOADS[2],
        "why": PAYLOADS[3],
        "targets": [{"kind": "probe", "probe": PAYLOADS[4], "group": PAYLOADS[5]}],
        "verdict": "verified",
        "reason": PAYLOADS[6],
        "targeted": {
            "n": 4,
            "before": before,
            "after": after,
            "repaired": 4,
            "still_failing": 0,
            "unscored": 0,
            "per_probe": {PAYLOADS[4]: {"n": 4, "repaired": 4, "still_failing": 0}},
            "rows": [
                {"kind": "probe", "probe": PAYLOADS[4], "group": PAYLOADS[5], "after_failed": False}
            ],
        },
        "probes": {
            PAYLOADS[7]: {
                "failure_rate": {"before": before, "after": after},
                "new_failures": [PAYLOADS[8]],
                "repaired": [PAYLOADS[9]],
                "failed": {"before": 3, "after": 0},
            }
        },
    }
    return {
        "probeguard_version": "test",
        "failures": 4,
        "attributed": 4,
        "without_fix": 0,
        "rule": {"tolerance": 0.0, "sharp": 0.5},
        "fixes": [
            measured,
            {
                **measured,
                "id": PAYLOADS[8],
                "verdict": "not_applicable",
                "targeted": None,
                "probes": None,
            },
        ],
        "verdicts": {"verified": 1, "not_applicable": 1},
    }

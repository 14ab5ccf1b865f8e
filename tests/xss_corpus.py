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
from probeguard.engine.scan import ScanResult, scan

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

"""report.html at scale: a synthetic 10,000-case run (2,500 probe groups of 4 cases, 5
retrieved contexts each from a pool of 2,000 chunks, texts from a seeded generator), rendered,
then opened from file:// in Debian's chromium (Playwright, no download) until the page is
interactive (the script has built the filters and the first table page: ``body[data-ready]``),
and a filter applied. Baseline: the time to parse the same page's embedded JSON alone in the
same browser (``JSON.parse``), the floor any page that carries this data pays.

    python -m benchmarks.bench_html_report                 # 10,000 cases
    python -m benchmarks.bench_html_report --cases 2000
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._common import report
from probeguard.core.cases import Case, Expected
from probeguard.core.pipeline import PipelineOutput, RetrievedChunk
from probeguard.core.records import CaseRecord, ProbeGroup
from probeguard.reports.html import render_html
from probeguard.results.run import RunLog

WORDS = (
    "refund policy order days customer warranty store item return price plan member annual "
    "shipping record invoice delivery account support region river city year number staff"
).split()


def _text(rng: np.random.Generator, words: int) -> str:
    return " ".join(rng.choice(WORDS, size=words)).capitalize() + "."


def synthetic_run(cases: int, seed: int = 0) -> RunLog:
    """A run log of ``cases`` probe cases in groups of four (every tenth group failing)."""
    rng = np.random.default_rng(seed)
    pool = [
        RetrievedChunk(
            chunk_id=f"doc-{i // 4}#{i % 4 * 500}-{i % 4 * 500 + 500}",
            doc_id=f"doc-{i // 4}",
            text=_text(rng, 90),
            rank=1,
            title=f"Document {i // 4}",
            metadata={"status": "archived" if i % 17 == 0 else "current"},
        )
        for i in range(2000)
    ]
    records, groups = [], []
    for g in range(cases // 4):
        ids = []
        for role in range(4):
            picks = rng.choice(len(pool), size=5, replace=False)
            case = Case(
                id=f"probe_{g % 8}:g{g}:r{role}",
                question=_text(rng, 14),
                probe=f"probe_{g % 8}",
                expected=Expected(answers=("30 days",), evidence_doc_ids=(f"doc-{g % 500}",)),
                tags=(f"tag{g % 5}",),
                meta={"group": f"g{g}", "role": f"r{role}"},
            )
            retrieved = [pool[p].model_copy(update={"rank": r + 1}) for r, p in enumerate(picks)]
            output = PipelineOutput(answer=_text(rng, 35), retrieved=retrieved)
            records.append(CaseRecord(case=case, call_key=f"{g}-{role}", output=output))
            ids.append(case.id)
        evidence = {"answer": records[-1].output.answer if records[-1].output else ""}
        groups.append(
            ProbeGroup(
                probe=f"probe_{g % 8}",
                group=f"g{g}",
                failed=g % 10 == 0,
                case_ids=ids,
                evidence=evidence,
            )
        )
    return RunLog(
        probeguard_version="bench",
        config={},
        pipeline_name="synthetic",
        pipeline_fingerprint="0" * 64,
        records=records,
        groups=groups,
    )


def _open(page: Any, url: str) -> tuple[float, float, float]:
    """(seconds to interactive, seconds for a filter, seconds for JSON.parse alone)."""
    start = time.perf_counter()
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']", timeout=60_000)
    ready = time.perf_counter() - start
    start = time.perf_counter()
    page.select_option("#f-outcome", "fail")
    page.inner_text("#f-count")
    filtered = time.perf_counter() - start
    parse_ms = page.evaluate(
        "() => { const t = document.getElementById('pg-data').textContent;"
        " const s = performance.now(); JSON.parse(t); return performance.now() - s; }"
    )
    return ready, filtered, float(parse_ms) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright  # an optional dev dependency

    run = synthetic_run(args.cases)
    start = time.process_time()
    page_html = render_html(run)
    render_s = time.process_time() - start
    out = Path(tempfile.mkdtemp()) / "report.html"
    out.write_text(page_html, encoding="utf-8")
    size_mb = out.stat().st_size / 1e6
    print(f"{args.cases:,} cases: report.html {size_mb:.1f} MB, rendered in {render_s:.2f} CPU s")
    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("chromium not found: `make browser` installs it")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        timings = []
        for _ in range(args.rounds):
            page = browser.new_page()
            timings.append(_open(page, out.as_uri()))
            page.close()
        browser.close()
    ready, filtered, parse = (sorted(t[i] for t in timings)[len(timings) // 2] for i in range(3))
    print(f"filter applied in {filtered:.3f} s (median of {args.rounds})")
    report(
        f"interactive in chromium ({args.cases:,} cases)",
        ready,
        "s",
        "JSON.parse of the embedded data",
        parse,
        higher_is_better=False,
    )
    shutil.rmtree(out.parent)


if __name__ == "__main__":
    main()

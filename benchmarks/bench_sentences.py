"""Sentence splitting in a demo scan: the memo by text vs splitting every call afresh.

A scan splits the same chunks, documents and answers into sentences again and again (the
extractive generator, the judges, the probes, the defences). ``probeguard.nlp.text`` memoises
``sentence_spans`` / ``split_sentences`` by text (an LRU of ``SENTENCE_MEMO_SIZE`` texts up to
``SENTENCE_MEMO_MAX_CHARS`` characters). This benchmark runs the demo scan
(``probeguard scan --demo``, response cache off, concurrency 1, output to a temporary folder)
with a counter around the splitter, in two variants:

* ``memo``: as shipped;
* ``no memo`` (the named baseline): the same calls, each split afresh with syntok.

Each variant runs in its own process (so the other caches of the library, e.g. the extractive
generator's sentence analysis, start cold in both), ``--rounds`` times, taking turns. Figures,
medians over rounds:

* sentence-splitting calls per scan (the same in both variants) and texts actually split with
  syntok (the memo's misses; in the baseline every call);
* CPU seconds spent in sentence splitting per scan (``time.thread_time`` around each call),
  ours vs the baseline: the ratio is the splitter's speed-up;
* the whole scan's CPU seconds (``time.process_time``), ours vs the baseline; and its wall
  time, printed without a ratio. CPU time, not wall time, is compared because on a shared
  machine the wall time of a scan moves with the other processes' load far more than the
  memo moves it.

A judge-heavy path (``--judge-log RUN_JSONL``, the ``run.jsonl`` of a demo scan): every
answered case of that log scored once by the offline eval path (``engine.evaluate.
score_record`` with the default judges: its answer, its retrieved chunks as contexts, its
first expected answer as ground truth), memo vs no memo, each variant in its own process
with the memo empty at the start. Figures: splitting calls and syntok runs, and the CPU
seconds of the scoring, ours vs the baseline.

Run: ``PYTHONPATH=src .venv/bin/python -m benchmarks.bench_sentences [--rounds 1]
[--judge-log runs/demo/run.jsonl] [--skip-scan]``
(~1.5 minutes a round on 2 shared cores: two demo scans).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._common import report
from probeguard.config import load_config
from probeguard.engine.scan import scan
from probeguard.nlp import text as text_module

VARIANTS = ("memo", "no memo")


class _CountingSplitter:
    """Stands in for ``probeguard.nlp.text._spans`` (every public splitting call goes
    through it) and counts calls, texts split by syntok and the seconds spent."""

    def __init__(self, memo: bool) -> None:
        self.memo = memo
        self.calls = 0
        self.long_texts = 0
        self.seconds = 0.0
        self._inner = text_module._spans if memo else text_module._segment

    def __call__(self, text: str) -> tuple[tuple[int, int], ...]:
        self.calls += 1
        self.long_texts += len(text) > text_module.SENTENCE_MEMO_MAX_CHARS
        start = time.thread_time()
        try:
            return self._inner(text)
        finally:
            self.seconds += time.thread_time() - start


def run_variant(variant: str) -> dict[str, Any]:
    """One demo scan with the splitter counted; the figures as a dict."""
    memo = variant == "memo"
    text_module._segment("Warm up. Imports syntok.")  # not counted: the import is not the work
    text_module._segment_memo.cache_clear()
    counter = _CountingSplitter(memo)
    text_module._spans = counter  # type: ignore[assignment]
    config = load_config(
        None, overrides={"demo": True, "runner": {"cache_dir": None, "concurrency": 1}}
    )
    with tempfile.TemporaryDirectory() as out:
        start, start_cpu = time.perf_counter(), time.process_time()
        scan(config, Path(out))
        wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    info = text_module._segment_memo.cache_info()
    return {
        "variant": variant,
        "calls": counter.calls,
        "segmented": info.misses + counter.long_texts if memo else counter.calls,
        "memo_hits": info.hits if memo else 0,
        "split_cpu_seconds": counter.seconds,
        "scan_cpu_seconds": cpu,
        "scan_wall_seconds": wall,
    }


def run_judge_variant(variant: str, log_path: str) -> dict[str, Any]:
    """The offline eval path over a demo run's answered cases, the splitter counted."""
    from probeguard.config.models import ScanConfig
    from probeguard.dataset.eval_records import EvalRecord
    from probeguard.detectors.factory import build_judges
    from probeguard.engine.evaluate import score_record
    from probeguard.log.writer import read_run_jsonl

    _, cases = read_run_jsonl(log_path)
    records = [
        EvalRecord(
            id=c.case.id,
            input=c.case.question,
            answer=c.output.answer,
            ground_truth=next(iter(c.case.expected.answers), None),
            retrieval_context=tuple(chunk.text for chunk in c.output.retrieved),
        )
        for c in cases
        if c.output is not None
    ]
    judges = build_judges(ScanConfig().judge)
    text_module._segment("Warm up. Imports syntok.")
    text_module._segment_memo.cache_clear()
    counter = _CountingSplitter(variant == "memo")
    text_module._spans = counter  # type: ignore[assignment]
    start = time.process_time()
    for record in records:
        score_record(record, None, judges)
    cpu = time.process_time() - start
    info = text_module._segment_memo.cache_info()
    return {
        "variant": variant,
        "records": len(records),
        "calls": counter.calls,
        "segmented": info.misses + counter.long_texts if variant == "memo" else counter.calls,
        "split_cpu_seconds": counter.seconds,
        "judge_cpu_seconds": cpu,
    }


def _spawn(variant: str, judge_log: str | None = None) -> dict[str, Any]:
    env = dict(os.environ)
    root = Path(__file__).resolve().parent.parent
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([str(root / "src"), str(root), *parts]))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.bench_sentences",
            "--variant",
            variant,
            *(["--judge-log", judge_log] if judge_log else []),
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_judge(log_path: str, rounds: int) -> None:
    """The judge-heavy path, memo vs no memo, ``rounds`` processes each, taking turns."""
    results: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    for r in range(rounds):
        for variant in VARIANTS if r % 2 == 0 else VARIANTS[::-1]:
            results[variant].append(_spawn(variant, log_path))

    def median(variant: str, key: str) -> float:
        return statistics.median(x[key] for x in results[variant])

    print(
        f"offline eval path over {median('memo', 'records'):,.0f} demo answers ({rounds} "
        f"round(s), median): {median('memo', 'calls'):,.0f} splitting calls; syntok runs "
        f"{median('memo', 'segmented'):,.0f} with the memo, "
        f"{median('no memo', 'segmented'):,.0f} without",
        flush=True,
    )
    for key, what in (("split_cpu_seconds", "sentence splitting"), ("judge_cpu_seconds", "all")):
        report(
            f"offline eval path over the demo's answers (CPU, {what}), memo",
            median("memo", key),
            "s",
            "no memo",
            median("no memo", key),
            higher_is_better=False,
        )


def run(rounds: int = 1) -> None:
    results: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    for r in range(rounds):
        order = VARIANTS if r % 2 == 0 else VARIANTS[::-1]
        for variant in order:
            results[variant].append(_spawn(variant))

    def median(variant: str, key: str) -> float:
        return statistics.median(x[key] for x in results[variant])

    memo, plain = "memo", "no memo"
    calls = median(memo, "calls")
    print(
        f"demo scan ({rounds} round(s), median): {calls:,.0f} sentence-splitting calls; "
        f"texts split by syntok: {median(memo, 'segmented'):,.0f} with the memo "
        f"({median(memo, 'memo_hits'):,.0f} memo hits), {median(plain, 'segmented'):,.0f} "
        f"without",
        flush=True,
    )
    report(
        "sentence splitting in a demo scan (CPU), memo",
        median(memo, "split_cpu_seconds"),
        "s",
        "no memo",
        median(plain, "split_cpu_seconds"),
        higher_is_better=False,
    )
    report(
        "whole demo scan (CPU), memo",
        median(memo, "scan_cpu_seconds"),
        "s",
        "no memo",
        median(plain, "scan_cpu_seconds"),
        higher_is_better=False,
    )
    print(
        f"whole demo scan (wall, load-dependent): memo {median(memo, 'scan_wall_seconds'):.1f} s, "
        f"no memo {median(plain, 'scan_wall_seconds'):.1f} s",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=1, help="scans per variant (median)")
    parser.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--judge-log", help="run.jsonl of a demo scan: also time the judges")
    parser.add_argument("--skip-scan", action="store_true", help="only the judge-heavy path")
    args = parser.parse_args(argv)
    if args.variant:
        figures = (
            run_judge_variant(args.variant, args.judge_log)
            if args.judge_log
            else run_variant(args.variant)
        )
        print(json.dumps(figures), flush=True)
        return 0
    if not args.skip_scan:
        run(args.rounds)
    if args.judge_log:
        run_judge(args.judge_log, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())

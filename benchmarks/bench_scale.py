"""Scale: a whole scan (default probes, attribution on, extractive generator) at growing corpus
sizes, documents x questions, with its wall time, CPU time, peak memory and index waits.

Corpus (deterministic in ``--seed``): HotpotQA from HaluEval's slice
(``$PROBEGUARD_SHARED_DATA/halueval/qa_one_turn.jsonl``, ``engine.bench.hotpotqa.build_inputs``):
``--questions`` questions with their two gold paragraphs, the other questions' paragraphs as
distractors, and, past the ~1,000 real paragraphs, *synthetic* distractors: 3-6 sentences
drawn (seeded ``numpy.random.Generator``) from the distractor paragraphs' sentences (never from a
chosen question's gold paragraphs), so the text has real vocabulary and sentence lengths.

Each point runs in a fresh process (``--point DOCS QUESTIONS``), which builds the pipeline,
indexes it (``index_s``: the configured index, unless ``--lazy``), scans
(``engine.scan.scan``, with a fresh response cache in the point's folder) and prints one JSON line: ``wall_s`` (index + scan), ``cpu_s``
(user + system of the process), ``peak_rss_mib`` (``ru_maxrss``), cases and calls,
``thread_s`` (the summed durations of every case's call: the runner's thread time) and
``lock_wait_s`` (time calls waited for an index another call was building:
``ReferencePipeline.index_wait_s``; on a checkout without it — the pipeline-wide lock of
before — the bench wraps that lock to time its waits). The figure per point is compared to the
issue's target as the named baseline: a 10,000-document / 200-question scan in 15 minutes.

Run:
``PYTHONPATH=src PROBEGUARD_SHARED_DATA=../shared/data python -m benchmarks.bench_scale
--docs 1000,3000,10000 --questions 200 --embedder hashing [--lazy] [--out DIR]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._common import report
from probeguard.config.models import ScanConfig
from probeguard.core.cases import Case
from probeguard.core.documents import Document
from probeguard.dataset.halueval import load_halueval_qa
from probeguard.engine.bench.hotpotqa import build_inputs, default_data_file
from probeguard.engine.scan import scan
from probeguard.engine.stages import build_pipeline
from probeguard.nlp.text import split_sentences
from probeguard.runner.settings import RunnerSettings

TARGET_S = 15 * 60
"""The issue's target: a 10,000-document / 200-question scan in under 15 minutes."""

EMBEDDERS = {"hashing": {"name": "hashing"}, "minilm": {"name": "minilm"}}


def corpus(n_docs: int, n_questions: int, seed: int) -> tuple[list[Document], list[Case]]:
    """The HotpotQA corpus of the module docstring, padded to ``n_docs`` with synthetic
    distractors."""
    items = load_halueval_qa(default_data_file())
    real = 2 * sum(1 for it in items if it.split)
    docs, cases = build_inputs(items, n_docs=min(n_docs, real), n_queries=n_questions, seed=seed)
    gold = {d for c in cases for d in c.expected.evidence_doc_ids}
    pool = sorted({s for d in docs if d.id not in gold for s in split_sentences(d.text)})
    rng = np.random.default_rng([seed, 18])
    for i in range(n_docs - len(docs)):
        picked = rng.choice(len(pool), size=int(rng.integers(3, 7)), replace=False)
        docs.append(
            Document(id=f"syn{i:05d}", text=" ".join(pool[j] for j in picked), source="synthetic")
        )
    return docs, cases


class TimedLock:
    """A lock proxy that sums the time its acquirers waited (for a checkout whose pipeline
    has one pipeline-wide ``_lock``)."""

    def __init__(self, lock: Any) -> None:
        self._lock = lock
        self._guard = threading.Lock()
        self.wait_s = 0.0

    def __enter__(self) -> TimedLock:
        started = time.perf_counter()
        self._lock.acquire()
        waited = time.perf_counter() - started
        with self._guard:
            self.wait_s += waited
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


def run_point(args: argparse.Namespace, n_docs: int, n_questions: int) -> dict[str, Any]:
    """One point, in this process (see the module docstring)."""
    docs, cases = corpus(n_docs, n_questions, args.seed)
    out = Path(args.out or tempfile.mkdtemp(prefix="bench-scale-")) / f"{n_docs}x{n_questions}"
    config = ScanConfig(
        seed=args.seed,
        pipeline={
            "type": "reference",
            "reference": {
                "embedder": EMBEDDERS[args.embedder],
                "generator": {"name": "extractive"},
            },
        },
        runner=RunnerSettings(concurrency=args.concurrency, cache_dir=out / "cache"),
    )
    started = time.perf_counter()
    pipeline: Any = build_pipeline(config, docs)
    timed = None
    if not hasattr(pipeline, "index_wait_s"):
        timed = pipeline._lock = TimedLock(pipeline._lock)
    if not args.lazy:
        pipeline.build()
    index_s = time.perf_counter() - started
    result = scan(config, out, pipeline=pipeline, inputs=(docs, cases))
    wall_s = time.perf_counter() - started
    cpu = os.times()
    records = result.run.records
    return {
        "docs": n_docs,
        "questions": n_questions,
        "chunks": len(pipeline.chunks),
        "cases": result.run.stats.cases,
        "calls": result.run.stats.calls,
        "attribution_calls": result.run.stats.attribution_calls,
        "index_s": round(index_s, 1),
        "wall_s": round(wall_s, 1),
        "cpu_s": round(cpu.user + cpu.system, 1),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "thread_s": round(sum(r.duration_s for r in records), 1),
        "lock_wait_s": round(timed.wait_s if timed else pipeline.index_wait_s, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", default="1000,3000,10000")
    parser.add_argument("--questions", default="200", help="one count, or one per size")
    parser.add_argument("--embedder", choices=sorted(EMBEDDERS), default="hashing")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--lazy", action="store_true", help="no index build before the scan")
    parser.add_argument("--out", default=None, help="keep the run folders here")
    parser.add_argument("--point", nargs=2, type=int, metavar=("DOCS", "QUESTIONS"))
    args = parser.parse_args()
    if args.point:
        print(json.dumps(run_point(args, *args.point)), flush=True)
        return
    sizes = [int(s) for s in args.docs.split(",")]
    questions = [int(q) for q in args.questions.split(",")]
    questions = questions * len(sizes) if len(questions) == 1 else questions
    print(f"embedder {args.embedder}; load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for n_docs, n_questions in zip(sizes, questions, strict=True):
        point = [*sys.argv[1:], "--point", str(n_docs), str(n_questions)]
        cmd = [sys.executable, "-m", "benchmarks.bench_scale", *point]
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
        row = json.loads(done.stdout.strip().splitlines()[-1])
        print(json.dumps(row), flush=True)
        share = row["lock_wait_s"] / row["thread_s"] if row["thread_s"] else float("nan")
        print(
            f"  lock-wait share {share:.3f} of {row['thread_s']} thread-s; "
            f"load now {os.getloadavg()[0]:.2f}"
        )
        report(
            f"scan {n_docs} docs x {n_questions} questions ({args.embedder})",
            row["wall_s"],
            "s",
            "target 10k docs x 200 questions",
            TARGET_S,
            higher_is_better=False,
        )


if __name__ == "__main__":
    main()

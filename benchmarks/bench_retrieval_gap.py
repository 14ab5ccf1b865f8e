"""Retrieval gap: does the probe separate a lexical-only retriever from a semantic one?

Data: NQ-open with its gold Wikipedia passages (``nq_open_oracle``, Liu et al. 2023, "Lost in
the Middle"; see ``../shared/data/README.md``) — not the demo corpus. The corpus is the gold
passages of the first ``--questions`` rows that have one plus the next ``--distractors``
passages as distractors (one ``Document`` each); each of those questions is a golden case whose
gold evidence is its own passage. NQ questions were written by searchers who had not seen the
passage, so their wording is their own, not the passage's.

Two question sets (``--wording``): ``as-written`` (the questions as NQ has them) and
``synonym`` (each question's words found in the general wording tables — ``related``,
``synonym`` — replaced, without looking at the evidence: ``substitute``, seed 0), so the set is
worded in synonyms of what its authors wrote.

The probe (``RetrievalGap``, default settings) runs through the ``Runner`` against the
reference pipeline (128-token chunks, top-k ``--top-k``, extractive generator) with the
retriever ``bm25`` and with ``dense`` over MiniLM (int8 ONNX, offline). Printed per retriever:
the failure rate with its Wilson interval, the outcomes, and per paraphrase kind the gap rate,
the share of variants that moved the gold rank, and the mean rank delta; then whether the BM25
interval lies wholly above the dense one (``separated``). Nothing is asserted.

Run: ``PYTHONPATH=src .venv/bin/python -m benchmarks.bench_retrieval_gap [--questions 150]
[--distractors 350] [--wording as-written|synonym|both]`` (about a minute and a half on 2
shared cores for the default sizes, most of it MiniLM embedding the passages).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import numpy as np

from probeguard.core.cases import Case, Expected
from probeguard.core.documents import Document
from probeguard.engine.bench.poisonedrag_data import (
    ORACLE_FILE,
    build_corpus,
    load_nq_open_oracle,
    oracle_doc_id,
)
from probeguard.nlp.paraphrase import substitute
from probeguard.pipeline.config import ReferencePipelineConfig
from probeguard.pipeline.reference import ReferencePipeline
from probeguard.probes.base import JudgeContext, ProbeContext, group_records
from probeguard.probes.retrieval_gap import GapSummary, RetrievalGap
from probeguard.runner.executor import Runner, RunnerConfig

RETRIEVERS: dict[str, dict[str, Any]] = {
    "bm25": {"retriever": {"name": "bm25"}, "embedder": {"name": "minilm"}},
    "dense": {"retriever": {"name": "dense"}, "embedder": {"name": "minilm"}},
}


def data_dir() -> Path:
    return Path(os.environ.get("PROBEGUARD_SHARED_DATA", "../shared/data"))


def synonym_worded(question: str) -> str:
    """The question with its table words replaced (``related``, then ``synonym``), blind to
    the evidence; unchanged when no table word occurs."""
    text = question
    for table in ("related", "synonym"):
        text = substitute(text, table, np.random.default_rng(0)) or text
    return text


def load(n_questions: int, n_distractors: int, wording: str) -> tuple[list[Document], list[Case]]:
    """The corpus and golden cases (module docstring)."""
    oracle = [it for it in load_nq_open_oracle(data_dir() / ORACLE_FILE) if it.text.strip()]
    gold, distractors = oracle[:n_questions], oracle[n_questions : n_questions + n_distractors]
    docs = build_corpus([*gold, *distractors])
    cases = [
        Case(
            id=f"nq{it.row}",
            question=synonym_worded(it.question) if wording == "synonym" else it.question,
            expected=Expected(answers=tuple(it.answers), evidence_doc_ids=(oracle_doc_id(it.row),)),
        )
        for it in gold
    ]
    return docs, cases


def run(docs: list[Document], cases: list[Case], retriever: str, top_k: int) -> GapSummary:
    """The probe's summary against the reference pipeline with ``retriever``."""
    config = ReferencePipelineConfig(
        top_k=top_k,
        chunker={"name": "tokens", "size": 128, "overlap": 32},
        **RETRIEVERS[retriever],
    )
    pipeline = ReferencePipeline(docs, config)
    ctx = ProbeContext(
        documents=tuple(docs),
        questions=tuple(cases),
        top_k=top_k,
        capabilities=pipeline.capabilities,
    )
    probe = RetrievalGap()
    result = Runner(pipeline, RunnerConfig(concurrency=2)).run(probe.generate(ctx))
    groups = group_records(result.records, probe.name)
    verdicts = [probe.judge(g, recs, JudgeContext(ctx)) for g, recs in groups.items()]
    return probe.summarize(verdicts)


def show(retriever: str, summary: GapSummary) -> None:
    rate = summary.failure_rate
    print(
        f"  {retriever:5s} failure rate {rate.value:.3f} [{rate.low:.3f}, {rate.high:.3f}] "
        f"n={rate.n} | outcomes {summary.outcomes} | original misses "
        f"{summary.original_misses.value:.3f} (recovered {summary.original_miss_recovered.value:.3f})",
        flush=True,
    )
    for kind, gap in summary.kind_gap_rates.items():
        moved = summary.kind_moved_rates[kind]
        delta = summary.kind_mean_rank_delta[kind]
        print(
            f"        {kind:14s} gap {gap.value:.3f} (n={gap.n})  moved {moved.value:.3f}  "
            f"mean rank delta {delta.value:+.2f}",
            flush=True,
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=150)
    parser.add_argument("--distractors", type=int, default=350)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--wording", choices=("as-written", "synonym", "both"), default="both")
    args = parser.parse_args(argv)
    wordings = ("as-written", "synonym") if args.wording == "both" else (args.wording,)
    for wording in wordings:
        docs, cases = load(args.questions, args.distractors, wording)
        print(
            f"retrieval_gap on NQ-open, {wording} questions: {len(cases)} questions, "
            f"{len(docs)} passages, top-{args.top_k}",
            flush=True,
        )
        summaries = {name: run(docs, cases, name, args.top_k) for name in RETRIEVERS}
        for name, summary in summaries.items():
            show(name, summary)
        bm25, dense = summaries["bm25"].failure_rate, summaries["dense"].failure_rate
        print(
            f"  separated (bm25 low {bm25.low:.3f} > dense high {dense.high:.3f}): "
            f"{bm25.low > dense.high}",
            flush=True,
        )


if __name__ == "__main__":
    main()

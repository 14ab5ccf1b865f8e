"""``probeguard bench qasper``: four long-document experiments on the QASPER sample, each
comparing conditions (``engine.bench.qasper_conditions``) by token F1, faithfulness, evidence
coverage (ECS) and the silent-failure quadrant, with plots (``engine.bench.qasper_plots``).

Runs of the reference pipeline (offline: BM25 by default, or MiniLM dense/hybrid; the
extractive generator by default, SmolLM2 on request), one per generator and corpus:

- ``chunks-<S>`` for S in the chunk sizes (256/512/1024): each paper one document, cut into
  token windows of S tokens (overlap 0 by default, so a boundary is a hard cut); every
  usable question asked once, retrieval filtered to its paper (``{"paper": id}``), top-k
  chunks. The **chunk_size** experiment compares these runs; the **boundary** and
  **spread** experiments split the run at the chosen size (512 by default) by condition.
  Top-k counts chunks, so a larger size also hands the generator more text: the
  chunk-size comparison measures the size as a pipeline setting, not at equal context.
- ``distraction``: each paragraph one document (one chunk); every question asked twice,
  retrieval filtered to the paragraph ids of the condition's pool (``gold_only`` or
  ``gold_plus_distractors``), same top-k. The **distraction** experiment compares the two.

Measures per question (``score_answer``), on the answer without its ``[n]`` citation
markers (``nlp.text.strip_citations``): token F1 = max over the QASPER references of the
SQuAD word-level F1 (``metrics.lexical.token_f1``, the official QASPER answer F1);
faithfulness = supported / scored answer claims against the retrieved chunks by the offline
judge (``metrics.standard.score_standard``); ECS = share of the evidence paragraphs one
retrieved chunk holds ≥ θ = 0.5 of (``metrics.coverage.evidence_coverage_score``). A failed
call leaves all three NaN (unscored). Per condition: the mean of each with a seeded
percentile bootstrap interval (``stats.bootstrap_mean``, over questions; questions of one
paper are not independent, so the intervals are optimistic) and the silent-failure quadrant
(``metrics.coverage.silent_failure_quadrant``): faithfulness > 0.5 while ECS < 0.5, an
answer that reads grounded in what was retrieved although the evidence was not retrieved,
as Wilson shares of the scored questions and of those with ECS < 0.5.

Read with care: BM25 returns only chunks that share a word with the question, so even
``gold_only`` can retrieve nothing (ECS 0) for a question worded apart from its evidence, and
a question with more evidence paragraphs than top-k cannot reach ECS 1; the extractive
generator copies sentences of what it retrieved, so its faithfulness is near 1 by
construction and its token F1 against QASPER's free-form references is low.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probeguard._version import __version__
from probeguard.core.artifacts import write_artifact
from probeguard.core.cases import Case, Expected
from probeguard.core.documents import Document, corpus_fingerprint
from probeguard.core.errors import InputError, MissingExtraError
from probeguard.core.pipeline import Context, PipelineOutput, Variation
from probeguard.core.records import CaseRecord
from probeguard.corpus.chunkers import make_chunker
from probeguard.detectors.config import JudgeConfig
from probeguard.detectors.factory import Judges, build_judges
from probeguard.engine.bench.poisonedrag import EMBEDDERS, GENERATORS, SERIAL_GENERATORS
from probeguard.engine.bench.qasper_conditions import (
    boundary_condition,
    distraction_pools,
    spread_condition,
)
from probeguard.engine.bench.qasper_data import (
    QasperData,
    QasperQuestion,
    load_qasper,
    paper_document,
    paragraph_documents,
)
from probeguard.engine.bench.qasper_plots import write_plots
from probeguard.engine.bench.qasper_summary import condition_rows
from probeguard.engine.bench.report import write_bench_report
from probeguard.engine.stages import build_runner, execute
from probeguard.metrics.coverage import DEFAULT_COVERAGE_THRESHOLD, evidence_coverage_score
from probeguard.metrics.standard import score_standard
from probeguard.nlp.text import strip_citations
from probeguard.pipeline.config import ReferencePipelineConfig
from probeguard.pipeline.reference import ReferencePipeline
from probeguard.reports.bench_qasper import render_qasper
from probeguard.reports.html_pages import qasper_plots
from probeguard.results.bench_qasper import QasperBench
from probeguard.runner.settings import RunnerSettings

__all__ = [
    "BACKENDS",
    "CHUNK_SIZES",
    "DEFINITIONS",
    "EXPERIMENTS",
    "RunSpec",
    "distraction_run",
    "run_qasper",
    "score_answer",
    "score_run",
    "window_run",
    "write_qasper",
]

BACKENDS = ("bm25", "dense", "hybrid")
"""Retrievers of the reference pipeline (``dense``/``hybrid`` use the MiniLM embedder)."""
CHUNK_SIZES = (256, 512, 1024)
EXPERIMENTS = ("boundary", "distraction", "spread", "chunk_size")
DEFINITIONS: dict[str, str] = {
    "boundary": "straddles = an evidence paragraph lies in no single chunk whole at the "
    "chosen size; whole = every evidence paragraph lies inside one chunk",
    "distraction": "retrieval over the evidence paragraphs only (gold_only) vs those plus "
    "every paragraph of the paper's sections without evidence (gold_plus_distractors)",
    "spread": "evidence paragraphs in >= 2 sections (multi_section) vs 1 (one_section)",
    "chunk_size": "token-window size of the paper's chunks (same top-k)",
}
"""Experiment → its conditions (the table's notes; ``qasper_conditions`` has the rules)."""
FAITHFULNESS_ABOVE = 0.5
ECS_BELOW = 0.5
_UNSCORED: dict[str, Any] = {
    "answer": "",
    "refused": False,
    "contexts": 0,
    "token_f1": math.nan,
    "faithfulness": math.nan,
    "ecs": math.nan,
}
"""The measures of a failed call: every one NaN (unscored), never 0."""


@dataclass(frozen=True)
class RunSpec:
    """One run's corpus, chunking and cases, with each case's question and conditions."""

    label: str
    documents: list[Document]
    chunker: dict[str, Any]
    cases: list[Case]
    questions: dict[str, QasperQuestion]
    """Case id → its question."""
    conditions: dict[str, dict[str, str]]
    """Case id → experiment → condition."""


def _case(case_id: str, q: QasperQuestion, filters: dict[str, Any]) -> Case:
    return Case(
        id=case_id,
        question=q.question,
        probe="bench-qasper",
        variation=Variation(retrieval={"filters": filters}),
        expected=Expected(answers=q.answers),
        meta={"paper": q.paper_id, "question_id": q.id},
    )


def window_run(
    data: QasperData, questions: Sequence[QasperQuestion], *, size: int, overlap: int, at: int
) -> RunSpec:
    """The ``chunks-<size>`` run; boundary and spread conditions when ``size == at``."""
    chunker = {"name": "tokens", "size": size, "overlap": overlap}
    cutter = make_chunker(chunker)
    layouts = {p.id: paper_document(p) for p in data.papers}
    chunks = {pid: cutter.chunk(lay.document) for pid, lay in layouts.items()} if size == at else {}
    cases, by_id, conditions = [], {}, {}
    for q in questions:
        case_id = f"{q.id}@{size}"
        labels = {"chunk_size": str(size)}
        if size == at:
            paper = data.paper(q.paper_id)
            lay = layouts[q.paper_id]
            found = {
                "boundary": boundary_condition(q, lay.spans, chunks[q.paper_id]),
                "spread": spread_condition(q, paper),
            }
            labels.update({k: v for k, v in found.items() if v is not None})
        cases.append(_case(case_id, q, {"paper": q.paper_id}))
        by_id[case_id] = q
        conditions[case_id] = labels
    docs = [lay.document for lay in layouts.values()]
    return RunSpec(f"chunks-{size}", docs, chunker, cases, by_id, conditions)


def distraction_run(data: QasperData, questions: Sequence[QasperQuestion]) -> RunSpec:
    """The ``distraction`` run: two cases per question whose evidence is all located."""
    cases, by_id, conditions = [], {}, {}
    for q in questions:
        for condition, pids in distraction_pools(q, data.paper(q.paper_id)).items():
            case_id = f"{q.id}/{condition}"
            cases.append(_case(case_id, q, {"pid": pids}))
            by_id[case_id] = q
            conditions[case_id] = {"distraction": condition}
    docs = [d for p in data.papers for d in paragraph_documents(p)]
    return RunSpec("distraction", docs, {"name": "document"}, cases, by_id, conditions)


def score_answer(q: QasperQuestion, output: PipelineOutput, judges: Judges) -> dict[str, Any]:
    """One answer's token F1, faithfulness and ECS (module doc)."""
    ranked = sorted(output.retrieved, key=lambda r: r.rank)
    contexts = [Context(r.chunk_id, r.text, r.title) for r in ranked]
    answer = strip_citations(output.answer)
    scored = score_standard(q.question, answer, contexts, judges, golds=q.answers)
    return {
        "answer": output.answer,
        "refused": output.refused,
        "contexts": len(contexts),
        "token_f1": scored.value("token_f1"),
        "faithfulness": scored.value("faithfulness"),
        "ecs": evidence_coverage_score(q.evidence, [c.text for c in contexts]),
    }


def score_run(
    spec: RunSpec, generator: str, done: Sequence[CaseRecord], judges: Judges
) -> list[dict[str, Any]]:
    """One record per executed case: its question, conditions and ``score_answer``'s
    measures, or every measure NaN with the error when the call failed."""
    out = []
    for rec in done:
        q = spec.questions[rec.case.id]
        base = {
            "generator": generator,
            "run": spec.label,
            "question_id": q.id,
            "paper_id": q.paper_id,
            "question": q.question,
            "conditions": spec.conditions[rec.case.id],
        }
        if rec.output is None:
            error = f"{rec.error.type}: {rec.error.message}" if rec.error else "no output"
            out.append({**base, **_UNSCORED, "error": error})
        else:
            out.append({**base, **score_answer(q, rec.output, judges), "error": None})
    return out


def _pipeline_config(
    chunker: dict[str, Any], retriever: str, generator: str, embedder: str, top_k: int
) -> ReferencePipelineConfig:
    return ReferencePipelineConfig(
        chunker=chunker,
        embedder=EMBEDDERS[embedder],
        retriever={"name": retriever},
        top_k=top_k,
        generator=GENERATORS[generator],
    )


def _check(generators: Sequence[str], retriever: str, embedder: str, sizes: Sequence[int]) -> None:
    unknown = [g for g in generators if g not in GENERATORS]
    if unknown or not generators:
        known = ", ".join(GENERATORS)
        raise InputError(
            f"unknown or no generator(s) {unknown}; known: {known}", field="generators"
        )
    if retriever not in BACKENDS:
        raise InputError(
            f"unknown retriever {retriever!r}; known: {', '.join(BACKENDS)}", field="retriever"
        )
    if embedder not in EMBEDDERS:
        raise InputError(
            f"unknown embedder {embedder!r}; known: {', '.join(EMBEDDERS)}", field="embedder"
        )
    if not sizes or any(s < 16 for s in sizes):
        raise InputError(
            f"chunk sizes must be at least 16 tokens, got {list(sizes)}", field="chunk_sizes"
        )


def run_qasper(
    data_file: Path,
    *,
    generators: Sequence[str] = ("extractive",),
    retriever: str = "bm25",
    embedder: str = "minilm",
    top_k: int = 3,
    chunk_sizes: Sequence[int] = CHUNK_SIZES,
    chunk_size: int = 512,
    chunk_overlap: int = 0,
    limit: int | None = None,
    seed: int = 0,
    resamples: int = 2000,
    concurrency: int = 4,
    cache_dir: Path | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> QasperBench:
    """Run every experiment for each generator (module doc); ``limit`` keeps the first N
    usable questions (file order). ``seed`` seeds the bootstrap intervals (nothing else
    here is random). ``progress(label, done, total)`` as cases finish."""
    sizes = sorted({*chunk_sizes, chunk_size})
    _check(generators, retriever, embedder, sizes)
    if limit is not None and limit < 1:
        raise InputError(f"limit must be at least 1, got {limit}", field="limit")
    data = load_qasper(data_file)
    usable = [q for q in data.questions if q.usable]
    asked = usable[:limit]
    specs = [
        *(window_run(data, asked, size=s, overlap=chunk_overlap, at=chunk_size) for s in sizes),
        distraction_run(data, asked),
    ]
    judges = build_judges(JudgeConfig())
    runs, records = [], []
    for generator in generators:
        workers = 1 if generator in SERIAL_GENERATORS else concurrency
        for spec in specs:
            ref = _pipeline_config(spec.chunker, retriever, generator, embedder, top_k)
            pipeline = ReferencePipeline(spec.documents, ref, name=f"reference-{spec.label}")
            label = f"{generator}/{spec.label}"
            callback = (lambda d, t, _l=label: progress(_l, d, t)) if progress else None
            settings = RunnerSettings(concurrency=workers, cache_dir=cache_dir)
            done = execute(build_runner(settings, pipeline, progress=callback), spec.cases)
            runs.append(
                {
                    "run": spec.label,
                    "generator": generator,
                    "pipeline_fingerprint": pipeline.fingerprint(),
                    "cases": len(spec.cases),
                    "calls": done.stats.calls,
                    "errors": sum(r.error is not None for r in done.records),
                }
            )
            records += score_run(spec, generator, done.records, judges)
    settings_dict = {
        "generators": {g: GENERATORS[g] for g in generators},
        "retriever": retriever,
        "embedder": EMBEDDERS[embedder] if retriever != "bm25" else None,
        "top_k": top_k,
        "chunk_sizes": sizes,
        "chunk_size": chunk_size,
        "chunk_overlap": chunk_overlap,
        "tokenizer": str(make_chunker(specs[0].chunker).config().get("tokenizer", "")),
        "limit": limit,
        "seed": seed,
        "resamples": resamples,
        "coverage_threshold": DEFAULT_COVERAGE_THRESHOLD,
        "faithfulness_above": FAITHFULNESS_ABOVE,
        "ecs_below": ECS_BELOW,
    }
    return _artifact(data, usable, settings_dict, runs, records, specs)


def _artifact(
    data: QasperData,
    usable: Sequence[QasperQuestion],
    settings: dict[str, Any],
    runs: list[dict[str, Any]],
    records: list[dict[str, Any]],
    specs: Sequence[RunSpec],
) -> QasperBench:
    rows = condition_rows(records, seed=settings["seed"], resamples=settings["resamples"])
    answerable = [q for q in data.questions if q.answers]
    return QasperBench.model_validate(
        {
            "probeguard_version": __version__,
            "corpus_fingerprint": corpus_fingerprint(specs[0].documents),
            "seed": settings["seed"],
            "settings": settings,
            "papers": len(data.papers),
            "questions_in_file": len(data.questions),
            "usable": len(usable),
            "unanswerable": len(data.questions) - len(answerable),
            "no_text_evidence": sum(1 for q in answerable if not q.evidence),
            "unlocated": sum(1 for q in usable if None in q.evidence_pids),
            "definitions": DEFINITIONS,
            "runs": runs,
            "conditions": rows,
            "plots": [],
            "records": records,
        }
    )


def write_qasper(bench: QasperBench, out_dir: Path, *, plots: bool = True) -> QasperBench:
    """Write the plots (unless ``plots`` is False, or matplotlib is missing: then
    ``plots_note`` says so), ``bench.json``, ``bench.md`` and ``bench.html`` into ``out_dir``; returns the
    result as saved."""
    names: list[str] = []
    note: str | None = "not asked for (--no-plots)"
    if plots:
        try:
            names = [p.name for p in write_plots(bench, out_dir)]
            note = None
        except MissingExtraError as exc:
            note = str(exc)
    saved = bench.model_copy(update={"plots": names, "plots_note": note})
    write_artifact(out_dir / "bench.json", saved)
    write_bench_report(out_dir, render_qasper(saved), qasper_plots(saved))
    return saved

"""The RGB counterfactual-robustness benchmark: does the pipeline repeat a planted fake answer
or correct it? (Data and licence: ``engine.bench.rgb_data``.)

Per generator, the reference pipeline answers the chosen questions over two corpora built from
*every* question's passages (``rgb_data.CORPORA``): ``clean`` (true answer passages + noise)
and ``counterfactual`` (RGB's test: the answer passages replaced by their copies edited to the
fake answer, + noise). Each answer gets one verdict (``verdict``):

- ``refused``: the pipeline refused (``PipelineOutput.refused``);
- otherwise, with *true* = some acceptable answer occurs in the answer and *fake* = the fake
  answer occurs in it — both tests are containment after SQuAD normalisation (lower case,
  punctuation and articles removed) on word boundaries (``nlp.text.contains_answer``), on the
  answer with citation markers stripped — ``both`` (true and fake), ``fake`` (fake only: it
  repeats the planted answer), ``true`` (true only: it corrected or ignored the planted
  answer), ``neither``.

Each verdict's share over the questions answered without error is a Wilson interval. RGB
itself (Chen et al. 2024, §3.4) scores counterfactual robustness by whether the model's output
contains the true answer after it flags the error; ``true`` is the comparable figure here.

Beside it, the ``corpus_contradiction`` probe runs (one scan per generator, the surgeon off)
on the same questions over the clean corpus: its failure rate is the share of questions whose
answer moved to a contradicting claim the probe planted itself — the tool's estimate of the
same weakness without RGB's hand-edited passages.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from probeguard._version import __version__
from probeguard.config.models import ScanConfig
from probeguard.core.documents import corpus_fingerprint
from probeguard.core.records import CaseRecord
from probeguard.engine.bench.poisonedrag import GENERATORS
from probeguard.engine.bench.qa_runs import (
    SERIAL_TIMEOUT_S,
    check_limit,
    check_names,
    generator_settings,
    is_serial,
    labelled,
    reference_config,
    run_cases,
    run_fields,
)
from probeguard.engine.bench.rgb_data import CORPORA, RgbItem, build_cases, build_corpus, load_rgb
from probeguard.engine.bench.squad import pick
from probeguard.engine.scan import scan
from probeguard.nlp.text import contains_answer, strip_citations
from probeguard.probes.models import ProbeRunSummary
from probeguard.reports.bench_qa import render_rgb
from probeguard.results.bench_qa import RgbBench, RgbMetrics, RgbOutcome, RgbProbeRow, RgbRow
from probeguard.runner.settings import RunnerSettings
from probeguard.stats import proportion

__all__ = ["PROBE", "VERDICTS", "render_table", "run_rgb", "summarize", "verdict"]

PROBE = "corpus_contradiction"
VERDICTS = ("fake", "true", "both", "neither", "refused")


def verdict(answer: str, refused: bool, answers: Sequence[str], fake: str) -> str:
    """The answer's verdict (rules in the module doc)."""
    if refused:
        return "refused"
    text = strip_citations(answer)
    true = any(contains_answer(text, a) for a in answers)
    planted = contains_answer(text, fake)
    if true and planted:
        return "both"
    return "true" if true else "fake" if planted else "neither"


def summarize(outcomes: Sequence[RgbOutcome]) -> RgbMetrics:
    """Each verdict's share (Wilson) over ``outcomes``."""
    return RgbMetrics(**{v: proportion([o.verdict == v for o in outcomes]) for v in VERDICTS})


def _outcomes(items: Sequence[RgbItem], records: Sequence[CaseRecord]) -> list[RgbOutcome]:
    return [
        RgbOutcome(
            id=it.id,
            answer=r.output.answer,
            verdict=verdict(r.output.answer, r.output.refused, it.answers, it.fake_answer),
        )
        for it, r in zip(items, records, strict=True)
        if r.output is not None
    ]


def _probe_row(
    generator: str,
    items: Sequence[RgbItem],
    all_items: Sequence[RgbItem],
    out_dir: Path,
    *,
    embedder: str,
    retriever: str,
    top_k: int,
    seed: int,
    concurrency: int,
    progress: Callable[[int, int], None] | None,
) -> RgbProbeRow:
    """Scan the clean corpus with the corpus_contradiction probe alone (surgeon off)."""
    ref = reference_config(generator, embedder=embedder, retriever=retriever, top_k=top_k)
    config = ScanConfig(
        seed=seed,
        pipeline={"type": "reference", "reference": ref},
        probes={"enabled": [PROBE]},
        attribution={"enabled": False},
        runner=RunnerSettings(
            concurrency=1 if is_serial(generator) else concurrency,
            cache_dir=out_dir / "cache",
            **({"timeout_s": SERIAL_TIMEOUT_S} if is_serial(generator) else {}),
        ),
    )
    started = time.perf_counter()
    inputs = (build_corpus(all_items, "clean"), build_cases(items, "clean"))
    result = scan(config, out_dir / f"probe-{generator}", inputs=inputs, progress=progress)
    found = (result.run.summary.probes or {}).get(PROBE)
    entry = found if isinstance(found, ProbeRunSummary) else None
    return RgbProbeRow(
        generator=generator,
        failure_rate=entry.failure_rate if entry is not None else None,
        summary=found.model_dump(mode="json") if found is not None else None,
        cases=result.run.stats.cases,
        wall_s=round(time.perf_counter() - started, 1),
        run_dir=str(result.out_dir),
    )


def run_rgb(
    data_file: Path,
    out_dir: Path,
    *,
    generators: Sequence[str] = ("extractive", "smollm2"),
    limit: int | None = None,
    slow_limit: int | None = 10,
    probe_generators: Sequence[str] = ("extractive",),
    embedder: str = "minilm",
    retriever: str = "hybrid",
    top_k: int = 5,
    seed: int = 0,
    concurrency: int = 4,
    progress: Callable[[str, int, int], None] | None = None,
) -> RgbBench:
    """Run every (generator, corpus) row, and the probe for each generator also in
    ``probe_generators`` (its scan makes ~5 calls a question: slow for SmolLM2); run logs,
    scans and the response cache go under ``out_dir``."""
    check_names(generators, list(GENERATORS), "generators")
    check_limit(limit, "limit")
    check_limit(slow_limit, "slow_limit")
    all_items = load_rgb(data_file)
    order = pick(len(all_items), limit, seed)
    rows, probes = [], []
    for generator in generators:
        n = min(len(order), slow_limit) if is_serial(generator) and slow_limit else len(order)
        items = [all_items[i] for i in order[:n]]
        ref = reference_config(generator, embedder=embedder, retriever=retriever, top_k=top_k)
        for kind in CORPORA:
            label = f"{generator}-{kind}"
            done = run_cases(
                build_corpus(all_items, kind),
                build_cases(items, kind),
                ref,
                name=f"reference-{retriever}-{generator}",
                serial=is_serial(generator),
                concurrency=concurrency,
                log_dir=out_dir / label,
                cache_dir=out_dir / "cache",
                seed=seed,
                progress=labelled(progress, label),
            )
            outcomes = _outcomes(items, done.records)
            rows.append(
                RgbRow(
                    **run_fields(generator, kind, done, len(outcomes)),
                    metrics=summarize(outcomes),
                    outcomes=outcomes,
                )
            )
        if generator in probe_generators:
            label = f"{generator}-{PROBE}"
            probes.append(
                _probe_row(
                    generator,
                    items,
                    all_items,
                    out_dir,
                    embedder=embedder,
                    retriever=retriever,
                    top_k=top_k,
                    seed=seed,
                    concurrency=concurrency,
                    progress=labelled(progress, label),
                )
            )
    return RgbBench(
        probeguard_version=__version__,
        corpus_fingerprint=corpus_fingerprint(build_corpus(all_items, "clean")),
        seed=seed,
        settings={
            "data": str(data_file),
            "limit": limit,
            "slow_limit": slow_limit,
            "probe_generators": [g for g in generators if g in probe_generators],
            "generators": generator_settings(generators),
            "corpora": {k: list(v) for k, v in CORPORA.items()},
            "embedder": embedder,
            "retriever": retriever,
            "top_k": top_k,
            "chunker": {"name": "document"},
            "matching": "containment after SQuAD normalisation on word boundaries",
        },
        questions=len(order),
        rows=rows,
        probe=probes,
    )


def render_table(result: RgbBench) -> str:
    """The benchmark table in Markdown (``reports.bench_qa.render_rgb``)."""
    return render_rgb(result)

"""The ClapNQ benchmark: does the pipeline refuse questions its passages cannot answer, answer
the ones they can, and stay faithful in a long answer? (Data: ``engine.bench.clapnq_data``.)

``limit`` answerable and ``limit`` unanswerable questions (the first of a seeded permutation
of each file; SmolLM2 has its own smaller ``slow_limit``) are asked under two conditions:

- ``retrieval``: the corpus is every passage of both files (600), whole-passage chunks; the
  pipeline retrieves ``top_k`` and answers;
- ``oracle``: the question's own passage is the only context (``Variation(contexts=...)``):
  for an unanswerable question, a related passage that does not answer it — the test of the
  refusal gate alone.

Measures per (generator, condition); questions whose call errored are left out:

- ``refusal_unanswerable`` = #{refused} / #unanswerable (Wilson);
- ``answered_answerable`` = #{not refused} / #answerable (Wilson);
- over the answered answerable questions: ``faithfulness`` = mean of the offline judge's
  faithfulness of the answer to the contexts it was given, as ``probeguard eval`` scores it
  (``engine.evaluate.score_record``; NaN = unscored, left out), ``fully_faithful`` = share with
  faithfulness 1.0 (Wilson, over the scored), ``rouge_l_recall`` = mean best ROUGE-L recall
  against the human long answers (``metrics.answer.rouge_l``; citation markers stripped);
  means with a seeded percentile bootstrap interval;
- ``gold_in_top_k`` = #{gold passage retrieved} / #answerable (retrieval only).

``gold_faithfulness`` (once per run) is the judge's mean faithfulness of the first human long
answer against its own passage, over the answerable questions asked: what the judge gives
answers that people wrote from the passage, the reference to read the rows' figure against.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

from probeguard._version import __version__
from probeguard.config.models import ScanConfig
from probeguard.core.documents import corpus_fingerprint
from probeguard.core.estimate import Estimate
from probeguard.core.records import CaseRecord
from probeguard.dataset.eval_records import EvalRecord
from probeguard.detectors.factory import Judges, build_judges
from probeguard.engine.bench.clapnq_data import (
    ClapnqItem,
    build_cases,
    build_corpus,
    data_files,
    doc_id,
    load_clapnq,
)
from probeguard.engine.bench.poisonedrag import GENERATORS
from probeguard.engine.bench.qa_runs import (
    check_limit,
    check_names,
    generator_settings,
    is_serial,
    labelled,
    reference_config,
    run_cases,
    run_fields,
)
from probeguard.engine.bench.squad import CONDITIONS, gold_rank, pick
from probeguard.engine.evaluate import score_record
from probeguard.metrics.answer import rouge_l
from probeguard.nlp.text import strip_citations
from probeguard.reports.bench_qa import render_clapnq
from probeguard.results.bench_qa import ClapnqBench, ClapnqMetrics, ClapnqOutcome, ClapnqRow
from probeguard.stats import bootstrap_mean, proportion

__all__ = ["faithfulness", "render_table", "run_clapnq", "score_outcome", "summarize"]


def faithfulness(record: EvalRecord, case: CaseRecord | None, judges: Judges) -> float:
    """The offline judge's faithfulness, as ``probeguard eval`` scores ``record`` (NaN:
    unscored)."""
    return score_record(record, case, judges)[1]["faithfulness"]


def score_outcome(item: ClapnqItem, record: CaseRecord, judges: Judges) -> ClapnqOutcome | None:
    """One answered question's outcome (None when its call errored)."""
    out = record.output
    if out is None:
        return None
    scored = item.answerable and not out.refused
    faith = (
        faithfulness(EvalRecord(id=record.case.id, input=item.question), record, judges)
        if scored
        else math.nan
    )
    text = strip_citations(out.answer)
    recall = max(rouge_l(text, a).recall for a in item.answers) if scored else math.nan
    retrieved = not record.case.variation.contexts
    return ClapnqOutcome(
        id=item.id,
        answerable=item.answerable,
        answer=out.answer,
        refused=out.refused,
        faithfulness=faith,
        rouge_l_recall=recall,
        gold_rank=gold_rank(out, doc_id(item)) if retrieved else None,
    )


def summarize(outcomes: Sequence[ClapnqOutcome], *, retrieval: bool, seed: int) -> ClapnqMetrics:
    """The row's measures (module doc)."""
    answerable = [o for o in outcomes if o.answerable]
    answered = [o for o in answerable if not o.refused]
    judged = [o.faithfulness for o in answered if not math.isnan(o.faithfulness)]
    return ClapnqMetrics(
        refusal_unanswerable=proportion([o.refused for o in outcomes if not o.answerable]),
        answered_answerable=proportion([not o.refused for o in answerable]),
        faithfulness=bootstrap_mean([o.faithfulness for o in answered], seed=seed),
        fully_faithful=proportion([f == 1.0 for f in judged]),
        rouge_l_recall=bootstrap_mean([o.rouge_l_recall for o in answered], seed=seed),
        gold_in_top_k=proportion(
            [o.gold_rank is not None for o in answerable] if retrieval else []
        ),
    )


def gold_faithfulness(items: Sequence[ClapnqItem], judges: Judges, seed: int) -> Estimate:
    """Mean faithfulness of each answerable item's first long answer to its passage."""
    values = [
        faithfulness(
            EvalRecord(
                id=it.id, input=it.question, answer=it.answers[0], retrieval_context=(it.passage,)
            ),
            None,
            judges,
        )
        for it in items
        if it.answerable
    ]
    return bootstrap_mean(values, seed=seed)


def _choose(root: Path, limit: int | None, seed: int) -> tuple[list[ClapnqItem], list[ClapnqItem]]:
    """(every item of both files, the chosen ones: ``limit`` of each, answerable first)."""
    loaded = [load_clapnq(p, answerable=a) for p, a in zip(data_files(root), (True, False))]
    chosen = [[part[i] for i in pick(len(part), limit, seed)] for part in loaded]
    return loaded[0] + loaded[1], chosen[0] + chosen[1]


def _subset(items: Sequence[ClapnqItem], n: int | None) -> list[ClapnqItem]:
    """The first ``n`` answerable and the first ``n`` unanswerable of ``items`` (all: None)."""
    part = lambda a: [it for it in items if it.answerable == a][:n]
    return part(True) + part(False)


def run_clapnq(
    data_dir: Path,
    out_dir: Path | None = None,
    *,
    generators: Sequence[str] = ("extractive", "smollm2"),
    conditions: Sequence[str] = CONDITIONS,
    limit: int | None = 100,
    slow_limit: int | None = 5,
    embedder: str = "minilm",
    retriever: str = "hybrid",
    top_k: int = 5,
    seed: int = 0,
    concurrency: int = 4,
    cache_dir: Path | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> ClapnqBench:
    """Run every (generator, condition) row (module doc); ``out_dir/<generator>-<condition>/``
    receives each row's run log when ``out_dir`` is given."""
    check_names(generators, list(GENERATORS), "generators")
    check_names(conditions, CONDITIONS, "conditions")
    check_limit(limit, "limit")
    check_limit(slow_limit, "slow_limit")
    every, chosen = _choose(data_dir, limit, seed)
    docs = build_corpus(every)
    judges = build_judges(ScanConfig().judge)
    rows = []
    for generator in generators:
        items = _subset(chosen, slow_limit if is_serial(generator) else None)
        ref = reference_config(generator, embedder=embedder, retriever=retriever, top_k=top_k)
        for condition in conditions:
            label = f"{generator}-{condition}"
            done = run_cases(
                docs,
                build_cases(items, condition),
                ref,
                name=f"reference-{retriever}-{generator}",
                serial=is_serial(generator),
                concurrency=concurrency,
                log_dir=out_dir / label if out_dir is not None else None,
                cache_dir=cache_dir,
                seed=seed,
                progress=labelled(progress, label),
            )
            found = [score_outcome(it, r, judges) for it, r in zip(items, done.records)]
            outcomes = [o for o in found if o is not None]
            rows.append(
                ClapnqRow(
                    **run_fields(generator, condition, done, len(outcomes)),
                    metrics=summarize(outcomes, retrieval=condition == "retrieval", seed=seed),
                    outcomes=outcomes,
                )
            )
    return ClapnqBench(
        probeguard_version=__version__,
        corpus_fingerprint=corpus_fingerprint(docs),
        seed=seed,
        settings={
            "data": [str(p) for p in data_files(data_dir)],
            "limit": limit,
            "slow_limit": slow_limit,
            "generators": generator_settings(generators),
            "conditions": list(conditions),
            "embedder": embedder,
            "retriever": retriever,
            "top_k": top_k,
            "chunker": {"name": "document"},
            "judge": judges.describe(),
        },
        answerable=sum(it.answerable for it in chosen),
        unanswerable=sum(not it.answerable for it in chosen),
        corpus_docs=len(docs),
        gold_faithfulness=gold_faithfulness(chosen, judges, seed),
        rows=rows,
    )


def render_table(result: ClapnqBench) -> str:
    """The benchmark table in Markdown (``reports.bench_qa.render_clapnq``)."""
    return render_clapnq(result)

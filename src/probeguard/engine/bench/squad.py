"""The SQuAD benchmark on XQuAD's English file (``xquad_en/xquad.en.json``: 240 paragraphs
of the SQuAD v1.1 dev set, 1,190 questions, one gold answer each): the reference pipeline's
answers scored as SQuAD scores them, per generator and condition.

Conditions:

- ``retrieval``: the corpus is the 240 paragraphs (one document each, whole-paragraph chunks);
  the pipeline retrieves ``top_k`` of them and answers;
- ``oracle``: the question's own paragraph is handed to the generator as its only context
  (``Variation(contexts=(paragraph,))``; retrieval skipped): the generator's ceiling.

Scores per question (``score_answer``), after citation markers (``[1]``) are stripped from the
answer (``nlp.text.strip_citations``): SQuAD v1.1 exact match and word-level F1, max over the
gold answers (``metrics.lexical``: lower case, punctuation and the articles a/an/the removed,
whitespace collapsed), and containment (a gold answer occurs in the answer on word
boundaries), which credits a correct answer given as a sentence. A refusal is scored like any
other answer (it holds no gold answer: EM 0, F1 ~0). Summary (``summarize``): EM, containment,
refusals and gold-paragraph-in-top-k as Wilson intervals; mean F1 with a seeded percentile
bootstrap interval. A question whose call errored is left out (counted in ``errors``).

``limit`` takes the first N questions of a seeded permutation of the file (the same N for
every seed-equal run); SmolLM2 (5-30 s an answer on a shared 2-core machine, with five
paragraphs in its prompt) has its own, smaller ``slow_limit`` over the same order.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from probeguard._version import __version__
from probeguard.core.cases import Case, Expected
from probeguard.core.documents import Document, corpus_fingerprint
from probeguard.core.pipeline import PipelineOutput, Variation
from probeguard.core.records import CaseRecord
from probeguard.dataset.squad import SquadItem, load_squad
from probeguard.engine.bench.poisonedrag import GENERATORS
from probeguard.engine.bench.qa_runs import (
    Executed,
    check_limit,
    check_names,
    generator_settings,
    is_serial,
    labelled,
    reference_config,
    run_cases,
    run_fields,
)
from probeguard.metrics.lexical import contains_answer, exact_match, token_f1
from probeguard.nlp.text import strip_citations
from probeguard.reports.bench_qa import render_squad
from probeguard.results.bench_qa import SquadBench, SquadMetrics, SquadOutcome, SquadRow
from probeguard.stats import bootstrap_mean, proportion

__all__ = [
    "CONDITIONS",
    "DATA_FILE",
    "build_cases",
    "build_corpus",
    "default_data_file",
    "gold_rank",
    "pick",
    "run_squad",
    "score_answer",
    "summarize",
]

DATA_FILE = Path("xquad_en") / "xquad.en.json"
CONDITIONS = ("retrieval", "oracle")
DOC_PREFIX = "xquad-p"


def default_data_file() -> Path:
    """``$PROBEGUARD_SHARED_DATA/xquad_en/xquad.en.json`` or ``../shared/data/...``."""
    root = os.environ.get("PROBEGUARD_SHARED_DATA") or str(Path("..") / "shared" / "data")
    return Path(root) / DATA_FILE


def doc_id(item: SquadItem) -> str:
    return f"{DOC_PREFIX}{item.paragraph}"


def build_corpus(items: Sequence[SquadItem]) -> list[Document]:
    """One document per paragraph (file order), titled with its article."""
    paragraphs = {it.paragraph: it for it in items}
    return [
        Document(id=doc_id(it), text=it.context, title=it.title.replace("_", " "))
        for it in paragraphs.values()
    ]


def build_cases(items: Sequence[SquadItem], condition: str) -> list[Case]:
    """One case per question; under ``oracle`` its paragraph is the only context."""
    check_names([condition], CONDITIONS, "conditions")
    return [
        Case(
            id=f"{it.id}/{condition}",
            question=it.question,
            expected=Expected(answers=it.answers, evidence_doc_ids=(doc_id(it),)),
            variation=Variation(contexts=(it.context,)) if condition == "oracle" else Variation(),
            tags=("xquad", condition),
        )
        for it in items
    ]


def pick(n_items: int, limit: int | None, seed: int) -> list[int]:
    """The first ``limit`` indices of a seeded permutation (all, in that order, when None)."""
    order = np.random.default_rng(seed).permutation(n_items)
    return [int(i) for i in order[: limit if limit is not None else n_items]]


def gold_rank(output: PipelineOutput, gold_doc: str) -> int | None:
    """Best rank of a chunk of ``gold_doc`` among the retrieved (None: not retrieved)."""
    return min((c.rank for c in output.retrieved if c.doc_id == gold_doc), default=None)


def score_answer(answer: str, golds: Sequence[str]) -> tuple[float, float, bool]:
    """(EM, F1, containment) of ``answer`` against ``golds`` (rules in the module doc)."""
    text = strip_citations(answer)
    return (
        exact_match(text, golds),
        token_f1(text, golds),
        any(contains_answer(text, g) for g in golds),
    )


def _outcome(item: SquadItem, record: CaseRecord, condition: str) -> SquadOutcome | None:
    out = record.output
    if out is None:
        return None
    em, f1, contains = score_answer(out.answer, item.answers)
    return SquadOutcome(
        id=item.id,
        answer=out.answer,
        exact_match=em,
        f1=f1,
        contains=contains,
        refused=out.refused,
        gold_rank=gold_rank(out, doc_id(item)) if condition == "retrieval" else None,
    )


def summarize(outcomes: Sequence[SquadOutcome], *, retrieval: bool, seed: int) -> SquadMetrics:
    """The row's measures (module doc)."""
    return SquadMetrics(
        exact_match=proportion([o.exact_match == 1.0 for o in outcomes]),
        f1=bootstrap_mean([o.f1 for o in outcomes], seed=seed),
        contains=proportion([o.contains for o in outcomes]),
        refusals=proportion([o.refused for o in outcomes]),
        gold_in_top_k=proportion([o.gold_rank is not None for o in outcomes] if retrieval else []),
    )


def _row(
    generator: str,
    condition: str,
    items: Sequence[SquadItem],
    done: Executed,
    seed: int,
) -> SquadRow:
    found = [_outcome(it, r, condition) for it, r in zip(items, done.records, strict=True)]
    outcomes = [o for o in found if o is not None]
    return SquadRow(
        **run_fields(generator, condition, done, len(outcomes)),
        metrics=summarize(outcomes, retrieval=condition == "retrieval", seed=seed),
        outcomes=outcomes,
    )


def run_squad(
    data_file: Path,
    out_dir: Path | None = None,
    *,
    generators: Sequence[str] = ("extractive", "smollm2"),
    conditions: Sequence[str] = CONDITIONS,
    limit: int | None = None,
    slow_limit: int | None = 20,
    embedder: str = "minilm",
    retriever: str = "hybrid",
    top_k: int = 5,
    seed: int = 0,
    concurrency: int = 4,
    cache_dir: Path | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> SquadBench:
    """Run every (generator, condition) row; ``out_dir/<generator>-<condition>/run.jsonl``
    receives each row's run log when ``out_dir`` is given."""
    check_names(generators, list(GENERATORS), "generators")
    check_names(conditions, CONDITIONS, "conditions")
    check_limit(limit, "limit")
    check_limit(slow_limit, "slow_limit")
    all_items = load_squad(data_file)
    docs = build_corpus(all_items)
    order = pick(len(all_items), limit, seed)
    rows = []
    for generator in generators:
        n = min(len(order), slow_limit) if is_serial(generator) and slow_limit else len(order)
        items = [all_items[i] for i in order[:n]]
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
            rows.append(_row(generator, condition, items, done, seed))
    return SquadBench(
        probeguard_version=__version__,
        corpus_fingerprint=corpus_fingerprint(docs),
        seed=seed,
        settings={
            "data": str(data_file),
            "questions_in_file": len(all_items),
            "limit": limit,
            "slow_limit": slow_limit,
            "generators": generator_settings(generators),
            "conditions": list(conditions),
            "embedder": embedder,
            "retriever": retriever,
            "top_k": top_k,
            "chunker": {"name": "document"},
        },
        corpus_docs=len(docs),
        rows=rows,
    )


def render_table(result: SquadBench) -> str:
    """The benchmark table in Markdown (``reports.bench_qa.render_squad``)."""
    return render_squad(result)

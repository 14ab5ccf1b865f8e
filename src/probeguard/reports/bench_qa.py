"""Tables of the QA benchmarks in Markdown (``bench squad``, ``bench rgb``, ``bench clapnq``):
pure functions of their saved models (``results.bench_qa``). Cells: value [95% interval];
``n/a (n=0)`` when there was nothing to measure."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from probeguard.core.estimate import Estimate
from probeguard.results.bench_qa import ClapnqBench, QaRowRun, RgbBench, SquadBench

__all__ = ["render_clapnq", "render_rgb", "render_squad"]


def _cell(est: Estimate | None) -> str:
    if est is None or math.isnan(est.value):
        return f"n/a (n={est.n if est is not None else 0})"
    return f"{est.value:.3f} [{est.low:.3f}, {est.high:.3f}]"


def _estimate(raw: Any) -> Estimate | None:
    """An Estimate from a summary's JSON (None, or NaN read from null, when absent)."""
    if not isinstance(raw, dict):
        return None
    nan = math.nan
    return Estimate.model_validate({k: nan if v is None else v for k, v in raw.items()})


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return lines + ["| " + " | ".join(r) + " |" for r in rows]


def _run_cells(row: QaRowRun) -> list[str]:
    return [str(row.questions), f"{row.wall_s:.0f} s"]


def _errors(rows: Sequence[QaRowRun]) -> list[str]:
    errors = sum(r.errors for r in rows)
    return [f"{errors} calls failed; their questions are left out."] if errors else []


def render_squad(result: SquadBench) -> str:
    """``bench.md`` of ``probeguard bench squad``: one row per (generator, condition)."""
    s = result.settings
    head = ["generator", "context", "EM", "F1", "contains gold", "refused"]
    head += ["gold paragraph in top-k", "questions", "time"]
    rows = [
        [
            r.generator,
            r.condition,
            _cell(r.metrics.exact_match),
            _cell(r.metrics.f1),
            _cell(r.metrics.contains),
            _cell(r.metrics.refusals),
            _cell(r.metrics.gold_in_top_k) if r.condition == "retrieval" else "—",
            *_run_cells(r),
        ]
        for r in result.rows
    ]
    intro = (
        f"XQuAD-en (SQuAD v1.1 dev subset): {result.corpus_docs} paragraphs, "
        f"{s['questions_in_file']} questions; limit {s['limit']}, SmolLM2 limit "
        f"{s['slow_limit']}, seed {result.seed}; {s['retriever']} retrieval "
        f"({s['embedder']}), top-{s['top_k']} whole paragraphs. EM and F1: SQuAD v1.1 "
        "normalisation, citation markers stripped; EM, contains, refused: Wilson 95%; "
        "F1: bootstrap 95%."
    )
    return "\n".join([intro, "", *_table(head, rows), *_errors(result.rows)]) + "\n"


def render_rgb(result: RgbBench) -> str:
    """``bench.md`` of ``probeguard bench rgb``: the verdict shares per (generator, corpus),
    then the corpus_contradiction probe's failure rate on the same questions."""
    s = result.settings
    head = ["generator", "corpus", "repeats fake", "true answer", "both", "neither"]
    head += ["refused", "questions", "time"]
    rows = [
        [
            r.generator,
            r.condition,
            _cell(r.metrics.fake),
            _cell(r.metrics.true),
            _cell(r.metrics.both),
            _cell(r.metrics.neither),
            _cell(r.metrics.refused),
            *_run_cells(r),
        ]
        for r in result.rows
    ]
    intro = (
        f"RGB counterfactual robustness (en_fact): {result.questions} questions, limit "
        f"{s['limit']}, SmolLM2 limit {s['slow_limit']}; {s['retriever']} retrieval "
        f"({s['embedder']}), top-{s['top_k']} passages over every question's passages. "
        "Wilson 95% intervals."
    )
    lines = [intro, "", *_table(head, rows), *_errors(result.rows)]
    if result.probe:
        probe_rows = [
            [
                p.generator,
                _cell(p.failure_rate),
                _cell(_estimate((p.summary or {}).get("injected_retrieved_rate"))),
                str(p.cases),
                f"{p.wall_s:.0f} s",
            ]
            for p in result.probe
        ]
        head_probe = ["generator", "failure rate", "injected doc retrieved", "cases", "time"]
        lines += [
            "",
            "corpus_contradiction probe on the same questions (clean corpus):",
            "",
            *_table(head_probe, probe_rows),
        ]
    return "\n".join(lines) + "\n"


def render_clapnq(result: ClapnqBench) -> str:
    """``bench.md`` of ``probeguard bench clapnq``: one row per (generator, condition)."""
    s = result.settings
    head = ["generator", "context", "refused, unanswerable", "answered, answerable"]
    head += ["faithfulness", "fully faithful", "ROUGE-L recall", "gold passage in top-k"]
    head += ["questions", "time"]
    rows = [
        [
            r.generator,
            r.condition,
            _cell(r.metrics.refusal_unanswerable),
            _cell(r.metrics.answered_answerable),
            _cell(r.metrics.faithfulness),
            _cell(r.metrics.fully_faithful),
            _cell(r.metrics.rouge_l_recall),
            _cell(r.metrics.gold_in_top_k) if r.condition == "retrieval" else "—",
            *_run_cells(r),
        ]
        for r in result.rows
    ]
    intro = (
        f"ClapNQ dev: {result.answerable} answerable + {result.unanswerable} unanswerable "
        f"questions (limit {s['limit']} each, SmolLM2 limit {s['slow_limit']}, seed "
        f"{result.seed}), {result.corpus_docs} passages; {s['retriever']} retrieval "
        f"({s['embedder']}), top-{s['top_k']}. Rates: Wilson 95%; faithfulness (offline "
        "judge) and ROUGE-L: bootstrap 95%, over answered answerable questions. The judge "
        f"gives the human long answers {_cell(result.gold_faithfulness)} against their passage."
    )
    return "\n".join([intro, "", *_table(head, rows), *_errors(result.rows)]) + "\n"

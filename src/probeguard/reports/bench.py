"""Benchmark tables in Markdown: pure functions of the benchmarks' saved models
(``results.bench``)."""

from __future__ import annotations

import math

from probeguard.core.estimate import Estimate
from probeguard.results.bench import JudgeBench, PoisonedRagBench

__all__ = ["render_judge", "render_poisonedrag"]


def _cell(est: Estimate, *, with_n: bool = False) -> str:
    if math.isnan(est.value):
        return f"n/a (n={est.n})"
    text = f"{est.value:.2f} [{est.low:.2f}, {est.high:.2f}]"
    return f"{text} (n={est.n})" if with_n else text


def render_poisonedrag(result: PoisonedRagBench) -> str:
    """The PoisonedRAG table in Markdown: one row per (backend, generator)."""
    s = result.settings
    paper = result.paper
    head = [
        "backend",
        "generator",
        "ASR [95% CI] (n)",
        "incorrect in clean answer",
        "clean acc",
        "poisoned acc",
        "poison in top-k",
        "≥1 poison retrieved",
        "gold in top-k (clean → poisoned)",
        "refusals (clean / poisoned)",
        "paper ASR",
    ]
    lines = [
        f"PoisonedRAG on NQ: {result.matched} of {result.matched + len(result.unmatched_ids)} "
        f"targets matched to nq-open-oracle"
        + (f" (first {s.limit} run)" if s.limit else "")
        + f"; clean corpus {result.corpus_docs} gold passages; {s.adv_per_target} adversarial "
        f"passages injected per target; top-k {s.top_k}; embedder {s.embedder['name']}; "
        "rates with Wilson 95% intervals (poison in top-k: mean share of the 5, bootstrap).",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for r in result.rows:
        m = r.metrics
        gold = f"{_cell(m.gold_in_top_k_clean)} → {_cell(m.gold_in_top_k_poisoned)}"
        refusals = (
            f"{m.clean_refusals.value:.2f} / {m.poisoned_refusals.value:.2f}"
            if r.targets
            else "n/a"
        )
        cells = [
            r.backend,
            r.generator,
            _cell(m.asr, with_n=True),
            _cell(m.clean_asr),
            _cell(m.clean_accuracy),
            _cell(m.poisoned_accuracy),
            _cell(m.poison_in_top_k),
            _cell(m.poison_any),
            gold,
            refusals,
            f"~{paper.asr:.2f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    errors = sum(r.errors for r in result.rows)
    lines += [
        "",
        f'Paper ASR: "{paper.claim}" — {paper.source}. Their setting: '
        f"{paper.setting}; here: a {result.corpus_docs}-passage corpus and the reference "
        "pipeline, so the comparison is indicative.",
        "ASR = the incorrect answer appears in the poisoned answer (SQuAD-normalised "
        "containment, the paper's substring match); 'incorrect in clean answer' is the "
        "same test without the attack (some gold passages mention the incorrect answer).",
    ]
    if errors:
        lines.append(f"{errors} calls failed; their targets are left out of the rates.")
    return "\n".join(lines) + "\n"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def render_judge(result: JudgeBench) -> str:
    """``bench.md`` of ``probeguard bench judge``: the offline judge beside the verbatim and
    token-overlap baselines, HaluEval then XQuAD (``engine.bench.judge`` defines the
    measures). Cells: value [95% interval] (n = records scored)."""
    c = lambda est: est.format(3)
    head = ["measure", "offline judge", "verbatim baseline", "token-overlap baseline"]
    judge = result.settings.judge.get("claims", "?")
    lines = [
        f"# Judge benchmark: the {judge} judge vs string baselines",
        "",
        f"seed {result.seed}, {result.settings.resamples} bootstrap resamples; scoring "
        f"{result.scoring_ms_per_record:.2f} ms/record (`score_record`, as `probeguard eval`).",
    ]
    h = result.halueval
    if h is not None:
        lines += [
            "",
            f"## HaluEval: right vs hallucinated answer ({h.questions} questions, {h.records} "
            f"records; {h.split_rows} knowledge fields split into two paragraphs)",
            "",
            _row(head),
            "|" + "---|" * len(head),
            _row(
                [
                    "AUROC, right vs hallucinated (question-cluster bootstrap)",
                    c(h.faithfulness_auroc),
                    c(h.verbatim_auroc),
                    c(h.overlap_auroc),
                ]
            ),
            _row(
                [
                    "share scored 1.0, right answers (Wilson)",
                    c(h.faithful_right),
                    c(h.verbatim_right),
                    "—",
                ]
            ),
            _row(
                [
                    "share scored 1.0, hallucinated answers (Wilson)",
                    c(h.faithful_hallucinated),
                    c(h.verbatim_hallucinated),
                    "—",
                ]
            ),
            "",
            f"Offline judge column = faithfulness (answer vs its contexts; no ground truth). "
            f"Unscored (faithfulness NaN): {h.unscored_right} right, {h.unscored_hallucinated} "
            f"hallucinated. Median answer relevancy of right answers: "
            f"{c(h.answer_relevancy_median_right)}.",
        ]
    x = result.xquad
    if x is not None:
        lines += [
            "",
            f"## XQuAD: gold answer over its gold paragraph ({x.questions} questions, "
            f"{x.paragraphs} paragraphs; paragraph-cluster bootstrap)",
            "",
            _row(head),
            "|" + "---|" * len(head),
            _row(
                [
                    "gold answer supported by its paragraph (faithfulness 1.0 / verbatim / "
                    "mean overlap)",
                    c(x.faithful),
                    c(x.verbatim),
                    c(x.overlap),
                ]
            ),
            _row(
                [
                    f"gold may be missing ({x.swapped} of {x.questions} paragraphs swapped): "
                    "(recall > 0) agrees with gold presence",
                    c(x.recall_agreement),
                    c(x.verbatim_agreement),
                    "—",
                ]
            ),
            "",
            f"Context recall 1.0 with the gold paragraph retrieved: {c(x.recall_full)}; "
            f"recall > 0 when the gold paragraph is there: {c(x.recall_when_present)}, when "
            f"swapped out: {c(x.recall_when_absent)}. Median answer relevancy: "
            f"{c(x.answer_relevancy_median)}. Unscored: faithfulness {x.unscored_faithfulness}, "
            f"recall {x.unscored_recall} (variant {x.unscored_variant}).",
        ]
    return "\n".join(lines) + "\n"

"""Benchmark tables in Markdown: pure functions of the benchmarks' saved models
(``results.bench``)."""

from __future__ import annotations

import math

from probeguard.core.estimate import Estimate
from probeguard.results.bench import PoisonedRagBench

__all__ = ["render_poisonedrag"]


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

"""The ``probeguard bench qasper`` table in Markdown: a pure function of its saved result
(``results.bench_qasper.QasperBench``)."""

from __future__ import annotations

import math

from probeguard.core.estimate import Estimate
from probeguard.results.bench_qasper import QasperBench

__all__ = ["render_qasper"]


def _mean(est: Estimate) -> str:
    if math.isnan(est.value):
        return f"n/a (n={est.n})"
    return f"{est.value:.2f} [{est.low:.2f}, {est.high:.2f}]"


def _share(est: Estimate, count: int) -> str:
    if math.isnan(est.value):
        return f"n/a (n={est.n})"
    return f"{est.value:.2f} [{est.low:.2f}, {est.high:.2f}] ({count}/{est.n})"


def render_qasper(bench: QasperBench) -> str:
    """One row per (generator, experiment, condition), then each experiment's definition and
    the plots written."""
    s = bench.settings
    embedder = f", embedder {s.embedder['name']}" if s.embedder else ""
    head = [
        "generator",
        "experiment",
        "condition",
        "questions",
        "refusals",
        "token F1",
        "faithfulness",
        "ECS",
        "silent failure (of all)",
        "silent failure (of ECS < 0.5)",
    ]
    lines = [
        f"QASPER sample: {bench.papers} papers, {bench.usable} of {bench.questions_in_file} "
        f"questions usable ({bench.unanswerable} unanswerable, {bench.no_text_evidence} with "
        f"figure/table evidence only; {bench.unlocated} with evidence matching no paragraph "
        f"have no boundary/spread/distraction condition)"
        + (f", first {s.limit} run" if s.limit else "")
        + f". Retriever {s.retriever}{embedder}, top-k {s.top_k}, token windows "
        f"{'/'.join(map(str, s.chunk_sizes))} ({s.tokenizer}, overlap {s.chunk_overlap}); "
        f"boundary and spread at {s.chunk_size}. Means with seeded bootstrap 95% intervals "
        f"(seed {s.seed}); silent failure = faithfulness > {s.faithfulness_above} while "
        f"ECS < {s.ecs_below}, Wilson 95% intervals (count/n).",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for r in bench.conditions:
        cells = [
            r.generator,
            r.experiment.replace("_", " "),
            r.condition.replace("_", " "),
            str(r.questions) + (f" ({r.errors} errors)" if r.errors else ""),
            _share(r.refusals, round(r.refusals.value * r.refusals.n)) if r.refusals.n else "n/a",
            _mean(r.token_f1),
            _mean(r.faithfulness),
            _mean(r.ecs),
            _share(r.silent_share, r.silent),
            _share(r.silent_share_of_low_ecs, r.silent),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines += [f"- {name.replace('_', ' ')}: {text}" for name, text in bench.definitions.items()]
    if bench.plots:
        lines.append(f"- plots: {', '.join(bench.plots)}")
    elif bench.plots_note:
        lines.append(f"- plots: none ({bench.plots_note})")
    return "\n".join(lines) + "\n"

"""The HotpotQA benchmark: the structural probes (``Probe.family == "structural"``: the
built-in four, and any installed probe of that family), FCS and the standard-evaluation
baseline on real multi-hop questions.

Data: HaluEval's HotpotQA slice (``probeguard.dataset.halueval``). From the rows whose two
supporting paragraphs can be split apart, a seeded draw picks ``n_queries`` questions; the
corpus is their 2 × ``n_queries`` gold paragraphs plus paragraphs of other questions as
distractors, up to ``n_docs``. Each question expects HotpotQA's answer and names both of its
paragraphs as gold evidence. The reference pipeline (MiniLM + hybrid retrieval by default) is
scanned once per generator; each scan is a normal run directory.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from probeguard.config.models import ScanConfig
from probeguard.core.cases import Case, Expected
from probeguard.core.documents import Document
from probeguard.core.errors import InputError
from probeguard.dataset.halueval import HotpotItem, load_halueval_qa
from probeguard.engine.scan import scan
from probeguard.pipeline.config import ReferencePipelineConfig
from probeguard.probes import load_probes
from probeguard.runner.settings import RunnerSettings
from probeguard.stats import Estimate

DATA_FILE = Path("halueval") / "qa_one_turn.jsonl"

GENERATORS: dict[str, dict[str, Any]] = {
    "extractive": {"name": "extractive"},
    "smollm2": {"name": "llama_cpp"},
}
"""Named generator presets for ``--generators``."""

FAMILY = "structural"
"""The probe family the benchmark runs (``Probe.family``)."""


def bench_probes() -> tuple[str, ...]:
    """The probes the benchmark runs: every registered probe of ``FAMILY``, in registry
    order (the built-in ones first)."""
    return tuple(name for name, cls in load_probes().items() if cls.family == FAMILY)


def default_data_file() -> Path:
    """``$PROBEGUARD_SHARED_DATA/halueval/qa_one_turn.jsonl`` or ``../shared/data/...``."""
    root = os.environ.get("PROBEGUARD_SHARED_DATA") or str(Path("..") / "shared" / "data")
    return Path(root) / DATA_FILE


def build_inputs(
    items: Sequence[HotpotItem], *, n_docs: int, n_queries: int, seed: int
) -> tuple[list[Document], list[Case]]:
    """The corpus and golden cases (see the module doc); deterministic in ``seed``."""
    usable = [it for it in items if it.split]
    if n_queries < 1 or n_queries > len(usable):
        raise InputError(
            f"n_queries must be between 1 and {len(usable)} (rows with two "
            f"separable paragraphs), got {n_queries}",
            field="n_queries",
        )
    if n_docs < 2 * n_queries:
        raise InputError(
            f"n_docs ({n_docs}) must be at least 2 × n_queries ({2 * n_queries}): "
            "every question brings its two gold paragraphs",
            field="n_docs",
        )
    order = np.random.default_rng(seed).permutation(len(usable))
    chosen = [usable[i] for i in order[:n_queries]]
    others = [usable[i] for i in order[n_queries:]]

    def doc(item: HotpotItem, j: int) -> Document:
        return Document(
            id=f"hp{item.row}-{j}",
            text=item.paragraphs[j],
            metadata={"hotpot_row": item.row},
            source=f"halueval:{item.row + 1}",
        )

    docs = [doc(it, j) for it in chosen for j in (0, 1)]
    for it in others:
        if len(docs) >= n_docs:
            break
        docs.extend(doc(it, j) for j in (0, 1) if len(docs) < n_docs)
    cases = [
        Case(
            id=f"hp{it.row}",
            question=it.question,
            expected=Expected(
                answers=(it.answer,), evidence_doc_ids=(f"hp{it.row}-0", f"hp{it.row}-1")
            ),
            tags=("hotpotqa",),
            meta={"hallucinated_answer": it.hallucinated_answer},
        )
        for it in chosen
    ]
    return docs, cases


@dataclass(frozen=True)
class BenchRow:
    generator: str
    metrics: dict[str, Any]
    """``fcs`` (float), ``adversarial_failure_rate`` (float), each probe's failure rate and
    ``standard_eval`` (Estimate dicts)."""
    cases: int
    calls: int
    wall_s: float
    run_dir: Path
    probes: tuple[str, ...] = ()
    """The probes run (``bench_probes``): the table's probe columns, in order."""


def run_hotpotqa(
    data_file: Path,
    out_dir: Path,
    *,
    n_docs: int = 250,
    n_queries: int = 50,
    seed: int = 42,
    generators: Sequence[str] = ("extractive", "smollm2"),
    reference: dict[str, Any] | None = None,
    concurrency: int = 4,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[BenchRow]:
    """Scan the reference pipeline with each generator; one ``BenchRow`` per generator."""

    unknown = [g for g in generators if g not in GENERATORS]
    if unknown:
        raise InputError(
            f"unknown generator(s) {', '.join(unknown)}; known: {', '.join(GENERATORS)}",
            field="generators",
        )
    docs, cases = build_inputs(
        load_halueval_qa(data_file), n_docs=n_docs, n_queries=n_queries, seed=seed
    )
    probes = bench_probes()
    rows = []
    for name in generators:
        ref = ReferencePipelineConfig(
            **{
                "embedder": {"name": "minilm"},
                "retriever": {"name": "hybrid"},
                **(reference or {}),
                "generator": GENERATORS[name],
            }
        )
        # The structural probes of the table (its published figures are theirs).
        config = ScanConfig(
            seed=seed,
            pipeline={"type": "reference", "reference": ref},
            probes={"enabled": list(probes)},
            runner=RunnerSettings(concurrency=concurrency, cache_dir=out_dir / "cache"),
        )
        started = time.perf_counter()
        callback = (lambda done, total, _n=name: progress(_n, done, total)) if progress else None
        result = scan(config, out_dir / name, inputs=(docs, cases), progress=callback)
        summary = result.run.summary
        fcs = summary.fcs
        metrics: dict[str, Any] = {
            "fcs": fcs.value if fcs is not None else math.nan,
            "adversarial_failure_rate": fcs.adversarial_failure_rate
            if fcs is not None
            else math.nan,
            "standard_eval": summary.standard_eval.failure_rate.model_dump()
            if summary.standard_eval is not None
            else None,
        }
        for probe in probes:
            entry = (summary.probes or {}).get(probe)
            metrics[probe] = entry.get("failure_rate") if entry is not None else None
        rows.append(
            BenchRow(
                generator=name,
                metrics=metrics,
                cases=result.run.stats.cases,
                calls=result.run.stats.calls,
                wall_s=round(time.perf_counter() - started, 1),
                run_dir=result.out_dir,
                probes=probes,
            )
        )
    return rows


def _cell(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, dict):
        if value.get("value") is None or math.isnan(value["value"]):
            return f"n/a (n={value.get('n', 0)})"
        return Estimate.model_validate(value).format(3)
    return "n/a" if math.isnan(value) else f"{value:.3f}"


def render_table(rows: Sequence[BenchRow], *, n_docs: int, n_queries: int, seed: int) -> str:
    """The benchmark table in Markdown: one row per generator, one column per probe run
    (its name, ``_`` read as a space)."""
    probes = rows[0].probes if rows else bench_probes()
    head = [
        "generator",
        "FCS",
        "adversarial failure",
        *(p.replace("_", " ") for p in probes),
        "standard-eval failure",
        "cases",
        "time",
    ]
    lines = [
        f"HotpotQA (HaluEval slice): {n_queries} questions, {n_docs} paragraphs, seed {seed}; "
        "rates with Wilson 95% intervals (n = judged groups)",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for r in rows:
        m = r.metrics
        cells = [
            r.generator,
            _cell(m["fcs"]),
            _cell(m["adversarial_failure_rate"]),
            *(_cell(m[p]) for p in probes),
            _cell(m["standard_eval"]),
            str(r.cases),
            f"{r.wall_s:.0f} s",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"

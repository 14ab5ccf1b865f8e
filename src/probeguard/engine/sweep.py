"""Side by side: one scan per retrieval backend (dense, BM25, hybrid RRF) of the reference
pipeline, on the same corpus, questions, probes and seed, and one comparison of them.

Each backend's scan is a normal run directory (``<out>/<backend>/run.json``, ``report.md``);
``<out>/comparison.json`` and ``comparison.md`` put their headline rates in one table and
show how a ``min_score`` gate behaves on each backend's scores (``metrics.gate``): the top
retrieved score of answerable golden questions against that of unanswerable ones (golden
``abstain`` questions and probe cases expecting abstention), its AUROC, whether it saturates,
the configured gate's false-refusal and abstention rates, and the best gate's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probeguard._version import __version__
from probeguard.config.models import ScanConfig
from probeguard.core.artifacts import artifact_json, write_artifact
from probeguard.core.errors import InputError
from probeguard.core.floats import normalise_floats
from probeguard.core.io import atomic_write_text, json_safe
from probeguard.engine.scan import ScanResult, scan
from probeguard.engine.stages import load_inputs
from probeguard.metrics.gate import gate_analysis, gate_scores
from probeguard.probes import probe_classes
from probeguard.reports.comparison import render_comparison
from probeguard.reports.html_pages import sweep_html
from probeguard.results.run import RunLog
from probeguard.results.sweep import Comparison

BACKENDS = ("dense", "bm25", "hybrid")
COMPARISON_JSON = "comparison.json"
COMPARISON_MD = "comparison.md"
COMPARISON_HTML = "comparison.html"

GOLDEN_HEADLINES: tuple[tuple[str, str], ...] = (
    ("evidence hit@k", "golden.retrieval_hit_at_k"),
    ("answer contains", "golden.answer_contains"),
)
"""(label, dotted path into ``run.json`` ``summary``) of the comparison's first rows."""

RUN_HEADLINES: tuple[tuple[str, str], ...] = (("FCS", "fcs.value"),)
"""The comparison's last rows, after the probes' own (``Probe.headlines``)."""


def headlines(probes: Sequence[str]) -> list[tuple[str, str]]:
    """(label, dotted path into ``run.json`` ``summary``) of the comparison's rows: the
    golden rows, each of ``probes``' headlines (``Probe.headlines``, by their ``order``; ties
    in the order of ``probes``, then as declared; unregistered names are left out), then
    FCS."""
    ranked = sorted(
        (h.order, i, j, h.label, f"probes.{name}.{h.key}")
        for i, (name, cls) in enumerate(probe_classes(probes).items())
        for j, h in enumerate(cls.headlines)
    )
    return [*GOLDEN_HEADLINES, *((label, path) for *_, label, path in ranked), *RUN_HEADLINES]


@dataclass(frozen=True)
class SweepResult:
    runs: dict[str, ScanResult]
    artifact: Comparison
    """What ``comparison.json`` holds."""
    out_dir: Path

    @property
    def comparison(self) -> dict[str, Any]:
        """``comparison.json``'s data (NaN written as null)."""
        return artifact_json(self.artifact)

    @property
    def report_path(self) -> Path:
        return self.out_dir / COMPARISON_MD


def backend_config(config: ScanConfig, backend: str, min_score: float | None) -> ScanConfig:
    """``config`` with the reference pipeline's retriever replaced by ``backend`` (its
    default settings), gated at ``min_score`` when given."""
    retriever: dict[str, Any] = {"name": backend}
    if min_score is not None:
        retriever["min_score"] = min_score
    reference = config.pipeline.reference.model_copy(update={"retriever": retriever})
    pipeline = config.pipeline.model_copy(update={"reference": reference})
    return config.model_copy(update={"pipeline": pipeline})


def sweep_backends(
    config: ScanConfig,
    out_dir: str | Path,
    *,
    backends: Sequence[str] = BACKENDS,
    min_score: float | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> SweepResult:
    """Scan with each backend in turn, then write the comparison (module docstring).
    ``min_score`` gates every backend at the same threshold (None: no gate)."""
    if config.pipeline.type != "reference":
        raise InputError(
            "a backend sweep swaps the reference pipeline's retriever; "
            f"pipeline.type is '{config.pipeline.type}'",
            field="pipeline.type",
        )
    names = list(dict.fromkeys(backends))
    unknown = [b for b in names if b not in BACKENDS]
    if not names or unknown:
        raise InputError(
            f"backends must be among {', '.join(BACKENDS)}; got {', '.join(names) or 'none'}",
            field="backends",
        )
    out = Path(out_dir)
    inputs = load_inputs(config)
    runs: dict[str, ScanResult] = {}
    for backend in names:
        step = (lambda done, total, b=backend: progress(b, done, total)) if progress else None
        runs[backend] = scan(
            backend_config(config, backend, min_score), out / backend, progress=step, inputs=inputs
        )
    comparison = compare_runs({b: r.run for b, r in runs.items()}, min_score=min_score)
    out.mkdir(parents=True, exist_ok=True)
    write_artifact(out / COMPARISON_JSON, comparison)
    markdown = render_comparison(comparison)
    atomic_write_text(out / COMPARISON_MD, markdown)
    scores = {b: gate_scores(r.run.records) for b, r in runs.items()}
    atomic_write_text(out / COMPARISON_HTML, sweep_html(comparison, scores, markdown))
    return SweepResult(runs=runs, artifact=comparison, out_dir=out)


def lookup(summary: dict[str, Any], path: str) -> Any:
    """The value at a dotted ``path`` of ``summary``; None when any step is missing."""
    value: Any = summary
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def compare_runs(runs: dict[str, RunLog], *, min_score: float | None = None) -> Comparison:
    """The comparison of backend runs: headline rows (``headlines`` of the probes the runs
    enabled) and each backend's gate analysis."""
    # Read as run.json keeps them (floats normalised, ``core.floats``), so that a row's value is
    # the one each backend's run.json shows.
    summaries = {b: normalise_floats(artifact_json(run.summary)) for b, run in runs.items()}
    enabled = dict.fromkeys(
        name for run in runs.values() for name in lookup(run.config, "probes.enabled") or ()
    )
    rows: list[dict[str, Any]] = [
        {
            "label": label,
            "path": path,
            "values": {b: lookup(summary, path) for b, summary in summaries.items()},
        }
        for label, path in headlines(list(enabled))
    ]
    rows = [r for r in rows if any(v is not None for v in r["values"].values())]
    gates = {}
    for backend, run in runs.items():
        answerable, unanswerable = gate_scores(run.records)
        gates[backend] = gate_analysis(answerable, unanswerable, configured=min_score)
    first = next(iter(runs.values()))
    data = {
        "probeguard_version": __version__,
        "corpus_fingerprint": first.corpus_fingerprint,
        "seed": first.seed,
        "backends": list(runs),
        "min_score": min_score,
        "pipelines": {
            b: {
                "fingerprint": run.pipeline_fingerprint,
                "retriever": lookup(run.config, "pipeline.reference.retriever"),
            }
            for b, run in runs.items()
        },
        "rows": rows,
        "gate": gates,
        "cases": {b: run.stats.cases for b, run in runs.items()},
    }
    # NaN (an undefined AUROC or spread) is saved, and shown, as null.
    return Comparison.model_validate(json_safe(data))

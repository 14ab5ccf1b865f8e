"""The refusal gate, per retrieval backend.

Scores live on each backend's own scale: cosine for ``dense`` (and ``chroma``), unbounded
BM25 for ``bm25``, and reciprocal-rank-fused scores for ``hybrid``, which saturate near
``2 / (rrf_k + 1)`` (≈ 0.033). A single ``min_score`` therefore cannot serve them all, and
``defences.gate`` holds one threshold per backend. The threshold of the backend a call
actually uses (the configured retriever's name, or a ``Variation``'s ``retrieval.mode``)
becomes the retrieval ``min_score``: hits scoring below it are dropped, and with none left
the generator refuses. A call's explicit ``retrieval.min_score`` wins over the gate.

``calibrate_gate`` picks each backend's threshold from the top scores of answerable and
unanswerable questions by Youden's J (``probeguard.metrics.gate.best_gate``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from probeguard.metrics.gate import best_gate

__all__ = ["calibrate_gate", "gate_min_score"]


def gate_min_score(
    gate: Mapping[str, float], backend: str, explicit: float | None = None
) -> float | None:
    """The ``min_score`` for a call on ``backend``: ``explicit`` when given, else the gate's
    entry for the backend, else None (the retriever's own)."""
    if explicit is not None:
        return explicit
    value = gate.get(backend)
    return None if value is None else float(value)


def calibrate_gate(
    answerable_top_scores: Mapping[str, Sequence[float]],
    unanswerable_top_scores: Mapping[str, Sequence[float]],
) -> dict[str, float]:
    """Youden-best thresholds ``{backend: min_score}``, ready for ``defences.gate``, from the
    top scores (``metrics.gate.top_score`` of each output) of answerable and unanswerable
    questions per backend. Each is ``metrics.gate.best_gate``'s threshold: the observed score
    (or just above the highest) maximising ``J = abstention − false_refusal``, ties to the
    lowest. A backend lacking answerable or unanswerable scores is left out."""

    out: dict[str, float] = {}
    for backend in sorted(set(answerable_top_scores) & set(unanswerable_top_scores)):
        best = best_gate(
            list(answerable_top_scores[backend]), list(unanswerable_top_scores[backend])
        )
        if best is not None:
            out[backend] = float(best["min_score"])
    return out

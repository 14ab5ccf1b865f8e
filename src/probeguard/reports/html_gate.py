"""The refusal gate as a picture: the top retrieved score of answerable golden questions
against unanswerable ones (``metrics.gate.gate_scores``), with the gate the pipeline ran
with and the best gate those scores allow (Youden's J, ``metrics.gate.best_gate``).

The configured gate of a reference pipeline (``run.json``'s ``config.pipeline.reference``)
is the retriever's own ``min_score`` when set, else ``defences.gate[<retriever name>]``
(``pipeline.defences.gate.gate_min_score``); other pipelines have none we can read. A
question the gate refused retrieved nothing: its score is ``−inf``, counted, not drawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from probeguard.metrics.gate import best_gate, gate_scores
from probeguard.pipeline.defences.gate import gate_min_score
from probeguard.reports.html_escape import esc
from probeguard.reports.html_plots import score_strip
from probeguard.results.run import RunLog

__all__ = ["GATE_CAPTION", "configured_gate", "gate_section", "gate_strip"]

GATE_CAPTION = (
    "A gate refuses a question whose top retrieved score is below it: a good gate sits right "
    "of the unanswerable dots and left of the answerable ones; a tick marks each median."
)


def configured_gate(config: Mapping[str, Any]) -> float | None:
    """The ``min_score`` the reference pipeline ran with (module doc); None when none."""
    reference = (config.get("pipeline") or {}).get("reference") or {}
    retriever = reference.get("retriever") or {}
    own = retriever.get("min_score")
    gate = (reference.get("defences") or {}).get("gate") or {}
    value = gate_min_score(gate, str(retriever.get("name")), own)
    return None if value is None else float(value)


def gate_strip(
    answerable: Sequence[float],
    unanswerable: Sequence[float],
    gates: Sequence[tuple[str, float]],
    title: str,
) -> str:
    """Answerable vs unanswerable top scores with the gates (``html_plots.score_strip``)."""
    groups = [("answerable golden", answerable), ("unanswerable", unanswerable)]
    return score_strip(groups, gates, title)


def gate_section(run: RunLog) -> str:
    """The scan report's gate section; empty when the run has no answerable or no
    unanswerable question with an answer."""
    answerable, unanswerable = gate_scores(run.records)
    if not answerable or not unanswerable:
        return ""
    gates: list[tuple[str, float]] = []
    configured = configured_gate(run.config)
    if configured is not None:
        gates.append(("configured gate", configured))
    best = best_gate(answerable, unanswerable)
    if best is not None:
        gates.append(("best gate", float(best["min_score"])))
    svg = gate_strip(answerable, unanswerable, gates, "Top retrieved score by question kind")
    return f'<section id="gate"><h2>Refusal gate</h2><p>{esc(GATE_CAPTION)}</p>{svg}</section>'

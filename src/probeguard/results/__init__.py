"""The typed results a run saves and the reports render: ``run.json`` (``RunLog``),
``eval.json`` (``EvalArtifact``), ``fix.json`` (``FixArtifact``), ``comparison.json``
(``Comparison``), ``bench.json`` (``PoisonedRagBench``; ``JudgeBench`` for ``bench judge``,
``JudgesBench`` for ``bench judges``; ``QasperBench``, ``SquadBench``, ``RgbBench``,
``ClapnqBench`` for ``bench qasper|squad|rgb|clapnq``) and ``compare.json``
(``CompareArtifact``). Each inherits the shared
``core.artifacts.ArtifactHeader``; ``ARTIFACTS`` maps each ``kind`` to its model (what
``probeguard schema KIND`` prints).

This layer sits above the ones that produce the pieces (metrics, probes, attribution, config)
and below ``reports``, which are pure functions of these models, and ``engine``, which builds
them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from probeguard.results.bench import JudgeBench, PoisonedRagBench
from probeguard.results.bench_judges import JudgesBench
from probeguard.results.bench_qa import ClapnqBench, RgbBench, SquadBench
from probeguard.results.bench_qasper import QasperBench
from probeguard.results.compare import CompareArtifact
from probeguard.results.eval import EvalArtifact
from probeguard.results.fix import FixArtifact
from probeguard.results.run import RunLog, RunSummary, load_run_log
from probeguard.results.sweep import Comparison

__all__ = [
    "ARTIFACTS",
    "ClapnqBench",
    "CompareArtifact",
    "Comparison",
    "EvalArtifact",
    "FixArtifact",
    "JudgeBench",
    "JudgesBench",
    "PoisonedRagBench",
    "QasperBench",
    "RgbBench",
    "RunLog",
    "RunSummary",
    "SquadBench",
    "json_schema",
    "load_run_log",
]

ARTIFACTS: dict[str, type[BaseModel]] = {
    "run": RunLog,
    "eval": EvalArtifact,
    "fix": FixArtifact,
    "sweep": Comparison,
    "bench": PoisonedRagBench,
    "bench-judge": JudgeBench,
    "bench-squad": SquadBench,
    "bench-rgb": RgbBench,
    "bench-clapnq": ClapnqBench,
    "bench-qasper": QasperBench,
    "bench-judges": JudgesBench,
    "compare": CompareArtifact,
}
"""Artefact kind → its model."""


def json_schema(kind: str = "run") -> dict[str, Any]:
    """The JSON schema of one artefact kind (``KeyError`` for an unknown kind)."""
    return ARTIFACTS[kind].model_json_schema()

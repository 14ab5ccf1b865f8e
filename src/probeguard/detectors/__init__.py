"""Detectors and judges: they only *judge* (never call a pipeline), and are reusable
across probes. Each is versioned (``config()`` holds its name and version), so a change in
how it judges is visible in the run log.

- ``contradiction``: did an answer adopt an injected contradicting claim? An offline
  number / date / entity / negation judge and an NLI cross-encoder judge
  (``make_contradiction_judge({"name": "offline" | "nli", ...})``).
- ``similarity``: semantic similarity of two answers (MiniLM cosine; hashing TF-IDF when
  the ``onnx`` extra is missing), used to tell a hijacked answer from ordinary variation.
- ``claims``: atomic claim decomposition of an answer (``decompose``), with offsets,
  citations and hedges.
- ``judges``: claim×chunk ``Judgment``s of ``Verdict``s, computed once and shared by the
  judged metrics: ``OfflineJudge`` (``offline_judge``), ``NliJudge`` (``nli_judge``),
  ``LlmJudge`` (``llm_judge``), ``SmolJudge`` (``local_judge``: the LLM judge over a local
  llama.cpp model); ``PositionSwap``, ``Consensus`` and ``agreement``.
"""

from __future__ import annotations

from probeguard.detectors.claims import AtomicClaim, decompose
from probeguard.detectors.contradiction import (
    CONTRADICTION_JUDGES,
    Claim,
    ContradictionJudge,
    Decision,
    NLIContradictionJudge,
    OfflineContradictionJudge,
    make_contradiction_judge,
)
from probeguard.detectors.judges import Consensus, Judge, Judgment, PositionSwap, Verdict, agreement
from probeguard.detectors.llm_judge import LlmJudge
from probeguard.detectors.local_judge import SmolJudge
from probeguard.detectors.nli_judge import NliJudge
from probeguard.detectors.offline_judge import OfflineJudge
from probeguard.detectors.similarity import SemanticSimilarity

__all__ = [
    "CONTRADICTION_JUDGES",
    "AtomicClaim",
    "Claim",
    "Consensus",
    "ContradictionJudge",
    "Decision",
    "Judge",
    "Judgment",
    "LlmJudge",
    "NLIContradictionJudge",
    "NliJudge",
    "OfflineContradictionJudge",
    "OfflineJudge",
    "SmolJudge",
    "PositionSwap",
    "SemanticSimilarity",
    "Verdict",
    "agreement",
    "decompose",
    "make_contradiction_judge",
]

"""Detectors and judges: they only *judge* (never call a pipeline), and are reusable
across probes. Each is versioned (``config()`` holds its name and version), so a change in
how it judges is visible in the run log.

- ``contradiction``: did an answer adopt an injected contradicting claim? An offline
  number / date / entity / negation judge and an NLI cross-encoder judge
  (``make_contradiction_judge({"name": "offline" | "nli", ...})``).
- ``similarity``: semantic similarity of two answers (MiniLM cosine; hashing TF-IDF when
  the ``onnx`` extra is missing), used to tell a hijacked answer from ordinary variation.
"""

from __future__ import annotations

from probeguard.detectors.contradiction import (CONTRADICTION_JUDGES, Claim, ContradictionJudge,
                                                Decision, NLIContradictionJudge,
                                                OfflineContradictionJudge,
                                                make_contradiction_judge)
from probeguard.detectors.similarity import SemanticSimilarity

__all__ = ["CONTRADICTION_JUDGES", "Claim", "ContradictionJudge", "Decision",
           "NLIContradictionJudge", "OfflineContradictionJudge", "SemanticSimilarity",
           "make_contradiction_judge"]

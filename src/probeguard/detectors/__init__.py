"""Detectors and judges: they only *judge* (never call a pipeline), and are reusable
across probes. Each is versioned (``config()`` holds its name and version), so a change in
how it judges is visible in the run log.

- ``contradiction``: did an answer adopt an injected contradicting claim? An offline
  number / date / entity / negation judge and an NLI cross-encoder judge
  (``make_contradiction_judge({"name": "offline" | "nli", ...})``).
"""

from __future__ import annotations

from probeguard.detectors.contradiction import (CONTRADICTION_JUDGES, Claim, ContradictionJudge,
                                                Decision, NLIContradictionJudge,
                                                OfflineContradictionJudge,
                                                make_contradiction_judge)

__all__ = ["CONTRADICTION_JUDGES", "Claim", "ContradictionJudge", "Decision",
           "NLIContradictionJudge", "OfflineContradictionJudge", "make_contradiction_judge"]

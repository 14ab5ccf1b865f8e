"""Grounding check: refuse an answer that its contexts do not support.

The answer is split into atomic claims (``probeguard.detectors.claims.decompose``; hedges
and refusals left out) and each claim is judged against every context by the offline judge
(``probeguard.detectors.offline_judge.OfflineJudge``, default thresholds: a sentence holding
≥ 75% of the claim's words and all its numbers, dates and names supports it). A claim is
supported when some context supports it (``Judgment.claim_label``). The answer is
*grounded* when every scored claim is supported; it is *ungrounded* — and the pipeline
refuses — when some scored claim is unsupported or contradicted. An answer with no scored
claim (a refusal, or only hedges) is left as it is: there is nothing to check, which is not
the same as grounded (``check`` says ``"unscored"``).

The judge is lexical: an LLM answer that paraphrases its context ("send back" for
"return") reads as unsupported, so on such generators the check refuses some correct
answers. The false-refusal rate of the benign controls measures this.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from probeguard.core.pipeline import Context
from probeguard.detectors.claims import decompose, factual
from probeguard.detectors.offline_judge import OfflineJudge

__all__ = ["check_grounding"]


def check_grounding(answer: str, contexts: Sequence[Context]) -> dict[str, Any]:
    """``{"status": "grounded" | "ungrounded" | "unscored", "claims": n, "unsupported":
    [claim texts, at most 5]}`` for ``answer`` against ``contexts``."""

    claims = factual(decompose(answer))
    if not claims or not contexts:
        status = "unscored" if not claims else "ungrounded"
        return {
            "status": status,
            "claims": len(claims),
            "unsupported": [c.text for c in claims][:5],
        }
    judgment = OfflineJudge().judge(claims, list(contexts))
    labels = judgment.claim_labels()
    scored = [(c, label) for c, label in zip(claims, labels) if label != "unscored"]
    if not scored:
        return {"status": "unscored", "claims": len(claims), "unsupported": []}
    bad = [c.text for c, label in scored if label != "supported"]
    return {
        "status": "ungrounded" if bad else "grounded",
        "claims": len(claims),
        "unsupported": bad[:5],
    }

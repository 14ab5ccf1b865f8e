"""The claim judge and the relevance judge a ``JudgeConfig`` describes.

* claim judge: ``consensus`` set → ``Consensus`` of the named judges under its rule; else the
  judge ``name``; then, with ``position_swap``, wrapped in ``PositionSwap`` (cells whose
  verdict changes when the contexts are reversed become unscored).
* relevance judge (contextual and answer relevancy): ``relevance: llm`` → the LLM judge;
  ``offline`` → the offline heuristics; ``auto`` → the LLM judge when ``llm`` is the judge or
  one of the consensus, else offline. The NLI and SmolLM2 (``smollm2``: yes/no only) judges
  cannot decide relevance.

A bad setting (a judge that cannot be built) is an ``InputError`` whose field names the
config key (``judge.nli``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from probeguard.core.errors import InputError
from probeguard.detectors.config import JudgeConfig
from probeguard.detectors.judges import Consensus, Judge, PositionSwap
from probeguard.detectors.llm_judge import LlmJudge
from probeguard.detectors.local_judge import smollm2_judge
from probeguard.detectors.nli_judge import NliJudge
from probeguard.detectors.offline_judge import OfflineJudge

__all__ = ["Judges", "build_judges"]


@dataclass(frozen=True)
class Judges:
    """What the standard metrics are judged with."""

    claims: Judge
    """Judges claims × chunks (faithfulness, context recall, judge-decided precision)."""
    relevance: Any
    """``OfflineJudge`` (lexical heuristics) or ``LlmJudge`` (``relevance`` verdicts)."""

    @property
    def offline_relevance(self) -> bool:
        return isinstance(self.relevance, OfflineJudge)

    def describe(self) -> dict[str, Any]:
        """Name and fingerprint of each judge, for eval.json and the report."""
        return {
            "claims": self.claims.name,
            "claims_fingerprint": self.claims.fingerprint(),
            "relevance": getattr(self.relevance, "name", "?"),
            "relevance_fingerprint": self.relevance.fingerprint(),
        }


def _one(name: str, config: JudgeConfig) -> Judge:
    try:
        if name == "offline":
            return OfflineJudge(**config.offline.model_dump())
        if name == "nli":
            return NliJudge(**config.nli.model_dump())
        if name == "smollm2":
            return smollm2_judge(config.smollm2)
        return LlmJudge(**config.llm.model_dump())
    except (ValueError, TypeError) as exc:
        raise InputError(str(exc), field=f"judge.{name}") from None


def build_judges(config: JudgeConfig) -> Judges:
    """The claim and relevance judges of ``config`` (rules in the module docstring)."""
    names = list(config.consensus.judges) if config.consensus else [config.name]
    built = {n: _one(n, config) for n in names}
    claims: Judge = (
        Consensus([built[n] for n in names], config.consensus.rule)
        if config.consensus
        else built[config.name]
    )
    if config.position_swap:
        claims = PositionSwap(claims)
    use_llm = config.relevance == "llm" or (config.relevance == "auto" and "llm" in names)
    if use_llm:
        relevance = built["llm"] if "llm" in built else _one("llm", config)
    else:
        relevance = built["offline"] if "offline" in built else _one("offline", config)
    return Judges(claims, relevance)

"""``DefencesConfig``: the reference pipeline's optional defences, every one off by default.

It lives in ``pipeline.reference.defences`` of a scan config and may be overridden per call by
``Variation.defences`` (a partial mapping of the same fields). This module imports pydantic
only, so ``probeguard.config.models`` can import it cheaply.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["GATE_BACKENDS", "DefencesConfig", "validate_overrides"]

GATE_BACKENDS = ("dense", "bm25", "hybrid", "chroma")
"""Retrieval backends a ``gate`` entry may name."""


class DefencesConfig(BaseModel):
    """Optional defences of the reference pipeline (all off by default, so a config without
    them behaves, and fingerprints, exactly as before). Applied in this order: query
    expansion and the gate (retrieval), trust tiers, archived-document demotion and
    near-duplicate suppression (on the retrieved list), sanitising and spotlighting (on the
    contexts the generator sees), then grounding and conflict checks (on the answer)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    trust_tiers: dict[str, float] = Field(default_factory=dict)
    """Weight per trust tier. A document's tier is ``metadata[trust_field]`` when present,
    else its ``source``; a key may be a glob pattern (``"*corpus.jsonl:*"``), tried after the
    exact keys, in order. The weight multiplies the hit's rank score ``1/rank`` (rank based,
    so it means the same for every backend's score scale); weight 0 drops the document.
    Tiers that match no key get ``default_trust``."""
    trust_field: str = "trust"
    """The metadata key holding a document's trust tier."""
    default_trust: float = Field(default=1.0, ge=0.0)
    """Weight of documents whose tier matches no key of ``trust_tiers``."""
    demote_archived: bool = False
    """Date-aware ranking: archived, superseded or draft documents rank below current ones
    (``probeguard.pipeline.defences.archive``)."""
    dedupe: bool = False
    """Drop a retrieved chunk nearly identical to a higher-ranked chunk of another document
    (``probeguard.pipeline.defences.dedupe``)."""
    conflict: Literal["off", "flag", "refuse"] = "off"
    """Two retrieved documents disagree on a number or date: record it in
    ``output.metadata["defences"]["conflicts"]`` (``flag``), or refuse when the conflict
    touches the answer's evidence (``refuse``)."""
    grounding: Literal["off", "refuse"] = "off"
    """Refuse when a claim of the answer is not supported by the contexts (offline judge)."""
    sanitise: bool = False
    """Strip instruction-like sentences (and the codes they order repeated) from the
    retrieved text before generation (``probeguard.pipeline.defences.sanitise``)."""
    spotlight: bool = False
    """Mark each retrieved passage in the prompt as delimited, untrusted data, with a rule
    never to follow instructions inside it (``probeguard.models.prompts.spotlight``)."""
    gate: dict[str, float] = Field(default_factory=dict)
    """``min_score`` per retrieval backend (``dense``, ``bm25``, ``hybrid``, ``chroma``): the
    refusal gate, calibrated per backend (``pipeline.defences.gate.calibrate_gate``). Applies to the
    backend actually used, a ``Variation``'s ``retrieval.mode`` included; an explicit
    ``retrieval.min_score`` of a call wins."""
    query_expansion: bool = False
    """Add synonyms and jargon (``nlp.paraphrase`` tables, both directions) to the query
    before retrieval; the generator still sees the question as asked."""

    @field_validator("trust_tiers")
    @classmethod
    def _weights(cls, tiers: dict[str, float]) -> dict[str, float]:
        bad = sorted(k for k, w in tiers.items() if not math.isfinite(w) or w < 0)
        if bad:
            raise ValueError(f"trust weights must be finite and >= 0: {', '.join(bad)}")
        return tiers

    @field_validator("gate")
    @classmethod
    def _backends(cls, gate: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(gate) - set(GATE_BACKENDS))
        if unknown:
            raise ValueError(
                f"gate names unknown retrieval backend(s) {', '.join(unknown)}; "
                f"known: {', '.join(GATE_BACKENDS)}"
            )
        bad = sorted(k for k, t in gate.items() if not math.isfinite(t))
        if bad:
            raise ValueError(f"gate thresholds must be finite: {', '.join(bad)}")
        return gate

    def active(self) -> dict[str, Any]:
        """The fields that differ from their defaults (JSON values); empty when all is off."""
        return self.model_dump(mode="json", exclude_defaults=True)

    def is_off(self) -> bool:
        return not self.active()

    def reorders(self) -> bool:
        """Some defence re-ranks or drops retrieved hits (so more candidates are fetched)."""
        return (
            bool(self.trust_tiers)
            or self.default_trust != 1.0
            or self.demote_archived
            or self.dedupe
        )

    def merged(self, overrides: Mapping[str, Any]) -> DefencesConfig:
        """This config with ``overrides`` (validated field by field) on top."""
        if not overrides:
            return self
        validate_overrides(overrides)
        return DefencesConfig.model_validate({**self.model_dump(), **dict(overrides)})


def validate_overrides(overrides: Mapping[str, Any]) -> dict[str, Any]:
    """``overrides`` checked against ``DefencesConfig`` and normalised to JSON values
    (``ValueError`` naming an unknown key and the known ones, or the bad value)."""
    unknown = sorted(set(overrides) - set(DefencesConfig.model_fields))
    if unknown:
        raise ValueError(
            f"unknown defence(s) {', '.join(repr(u) for u in unknown)}; known: "
            f"{', '.join(DefencesConfig.model_fields)}"
        )
    checked = DefencesConfig.model_validate(dict(overrides)).model_dump(mode="json")
    return {k: checked[k] for k in sorted(overrides)}

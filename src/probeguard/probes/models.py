"""Typed results of a probe: the evidence behind one group's verdict (``ProbeEvidence``) and
the probe's summary (``ProbeSummary``), as pydantic models.

**Evidence keeps the keys that were set.** How far a judge gets decides what it can say (an
errored call stops it early; a rank is known only when the pipeline reports its contexts), so
an evidence model serialises like the dict a judge builds key by key: only the fields set — by
the constructor, by validation or by assignment, ``None`` included — in the order first set.
Reading a field that was not set gives its default. ``run.json`` stores that dump, and a probe
reads it back with ``Probe.read_evidence`` (attribution does, to ask for the failing roles).

**Summaries are complete.** Every field of a summary is always there, in declaration order:
``failure_rate`` (an ``Estimate``), ``groups`` and ``unscored``, then the probe's own.

**A run keeps each summary with the probe's own fields as JSON** (``ProbeRunSummary``, in
``run.json``'s ``summary.probes``): the common fields typed, then the probe's own rates as its
summary model dumped them, then its goal, overlap weight and settings. A probe's own summary
model is known only while the probe is registered, so a run log of a third-party probe still
loads. A probe the pipeline could not run is kept as ``SkippedProbe`` (``{"skipped": why}``).

All of them also read like the dicts they replace (``summary["failure_rate"]["value"]``,
``evidence.get("unscored")``, ``set(summary)``): keys, items and values are those of the
dump (``core.artifacts.ByKeyModel``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import (
    ConfigDict,
    Discriminator,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    Tag,
    model_serializer,
    model_validator,
)

from probeguard.core.artifacts import ByKeyModel, JsonEstimate
from probeguard.core.estimate import Estimate

__all__ = [
    "EvidenceModel",
    "ProbeEvidence",
    "ProbeRunSummary",
    "ProbeSummary",
    "ProbeSummaryEntry",
    "SkippedProbe",
    "SummaryModel",
]


class EvidenceModel(ByKeyModel):
    """A model that serialises only the fields set, in the order first set (module
    docstring). Base of every evidence model and of the rows nested in one."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=True)

    _order: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _remember_order(cls, data: Any, handler: ModelWrapValidatorHandler[Any]) -> Any:
        model = handler(data)
        if isinstance(data, Mapping) and isinstance(model, EvidenceModel) and model is not data:
            model._order = tuple(k for k in data if k in model.model_fields_set)
        return model

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if not name.startswith("_") and name not in self._order:
            self._order = (*self._order, name)

    @model_serializer(mode="wrap")
    def _set_fields(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        return {k: data[k] for k in self._order if k in data}


class ProbeEvidence(EvidenceModel):
    """Why a group passed, failed or could not be judged. Probes subclass it with their own
    fields; this base also takes any extra key, for a quick plugin."""

    model_config = ConfigDict(extra="allow")

    unscored: str | None = None
    """Why the group could not be judged (set when the verdict's ``failed`` is None)."""


class SummaryModel(ByKeyModel):
    """Base of a summary and of the rows nested in one: every field always present."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=True)


class ProbeSummary(SummaryModel):
    """A probe's summary over its groups. Probes subclass it with their own rates."""

    failure_rate: Estimate
    """Share of judged groups that failed (Wilson)."""
    groups: int
    """Groups judged or not."""
    unscored: int
    """Groups that could not be judged (``failed`` None): neither passes nor failures."""


class ProbeRunSummary(ProbeSummary):
    """A probe's summary as a run keeps it (``run.json``'s ``summary.probes[name]``): the
    common fields, the probe's own fields (rates, breakdowns) as the JSON of its summary
    model, then ``goal``, ``overlap_weight`` and ``settings``."""

    model_config = ConfigDict(extra="allow")

    failure_rate: JsonEstimate
    """Share of judged groups that failed (Wilson); NaN (``null``) when none was judged."""
    goal: str = ""
    """What the probe looks for (``Probe.goal``)."""
    overlap_weight: float
    """The share of its failures standard evaluation would also catch, as FCS used it."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """The probe's settings (``Probe.config()``)."""

    @classmethod
    def of(
        cls, summary: ProbeSummary, *, goal: str, overlap_weight: float, settings: dict[str, Any]
    ) -> ProbeRunSummary:
        """``summary`` (a probe's own model) with the probe's goal, weight and settings."""
        return cls.model_validate(
            {
                **summary.model_dump(),
                "goal": goal,
                "overlap_weight": overlap_weight,
                "settings": settings,
            }
        )

    @property
    def own(self) -> dict[str, Any]:
        """The probe's own fields (those beyond ``ProbeSummary``'s), in its summary's order."""
        return dict(self.model_extra or {})

    @model_serializer(mode="wrap")
    def _own_fields_before_the_probe(
        self, handler: SerializerFunctionWrapHandler
    ) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        last = ("goal", "overlap_weight", "settings")
        return {
            **{k: v for k, v in data.items() if k not in last},
            **{k: data[k] for k in last if k in data},
        }


class SkippedProbe(SummaryModel):
    """A probe the pipeline could not run (``summary.probes[name]`` = ``{"skipped": why}``)."""

    model_config = ConfigDict(frozen=True)

    skipped: str
    """Why: the capabilities the pipeline lacks."""


def _entry_kind(value: Any) -> str:
    skipped = isinstance(value, SkippedProbe) or (isinstance(value, Mapping) and "skipped" in value)
    return "skipped" if skipped else "summary"


ProbeSummaryEntry = Annotated[
    Annotated[ProbeRunSummary, Tag("summary")] | Annotated[SkippedProbe, Tag("skipped")],
    Discriminator(_entry_kind),
]
"""One entry of ``summary.probes``: a probe's summary, or why it was skipped."""

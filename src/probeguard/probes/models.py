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

Both also read like the dicts they replace (``summary["failure_rate"]["value"]``,
``evidence.get("unscored")``, ``set(summary)``): keys, items and values are those of the
dump.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    ModelWrapValidatorHandler,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from probeguard.core.estimate import Estimate

__all__ = ["EvidenceModel", "ProbeEvidence", "ProbeSummary", "SummaryModel"]


class _ByKey(BaseModel):
    """A model read like the dict it replaces: keys, items and iteration over its dump
    (``dict(model)`` is that dump)."""

    def __getitem__(self, key: str) -> Any:
        return self.model_dump()[key]

    def __contains__(self, key: object) -> bool:
        return key in self.model_dump()

    def get(self, key: str, default: Any = None) -> Any:
        return self.model_dump().get(key, default)

    def keys(self) -> KeysView[str]:
        return self.model_dump().keys()

    def items(self) -> ItemsView[str, Any]:
        return self.model_dump().items()

    def values(self) -> ValuesView[Any]:
        return self.model_dump().values()

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]  # keys, as a dict's
        return iter(self.model_dump())

    def __len__(self) -> int:
        return len(self.model_dump())


class EvidenceModel(_ByKey):
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


class SummaryModel(_ByKey):
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

"""The units a release gate pairs, read from one run log, and each run's failure rate per slice.

Units and their stable ids (the same corpus, questions and seed give the same ids):

- a golden question ``golden:<case id>``, in the slices ``golden:pass`` (fails when its
  verdict did not pass), ``golden:hit`` (no gold evidence retrieved) and ``golden:contains``
  (the answer holds no gold answer); a check that does not apply (None) leaves the question
  out of that slice; an errored question is unscored in all three;
- a probe group ``<probe>:<group>``, in the slice ``probe:<probe>`` (fails when the group
  failed; ``failed: None`` is unscored), and in ``attack_type:<type>`` when its evidence
  names an ``attack_type``;
- ``tag:<tag>``: every golden question (its ``golden:pass`` outcome) and probe group whose
  cases carry the tag.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from probeguard.core.records import CaseRecord, ProbeGroup
from probeguard.metrics.golden import GoldenVerdict
from probeguard.results.compare import SliceKind, SliceRate
from probeguard.results.run import RunLog
from probeguard.stats import wilson

__all__ = ["Unit", "run_units", "slice_kind", "slice_rates", "unit_evidence"]

GOLDEN_CHECKS = {"pass": "passed", "hit": "hit", "contains": "contains"}
"""Golden slice → the ``GoldenVerdict`` field whose False is a failure."""

_PREFERRED = ("reason", "outcome", "failed_layers", "answer", "unscored", "hijacked", "refused")
"""Evidence keys shown first in a unit's evidence (the others follow, up to ``_MAX_FIELDS``)."""
_MAX_FIELDS = 8
_MAX_TEXT = 200


@dataclass(frozen=True)
class Unit:
    """One paired unit in one run: its verdict per slice (None: unscored there)."""

    id: str
    question: str
    outcomes: Mapping[str, bool | None]
    """Slice → failed (True), passed (False) or unscored (None)."""
    evidence: Mapping[str, Any] = field(default_factory=dict)


def slice_kind(name: str) -> SliceKind:
    """The kind of a slice name (its prefix)."""
    kind = name.split(":", 1)[0]
    if kind not in ("probe", "golden", "tag", "attack_type"):
        raise ValueError(f"unknown slice kind in {name!r}")
    return kind  # type: ignore[return-value]  # checked against the Literal above


def run_units(run: RunLog) -> dict[str, Unit]:
    """Every unit of ``run`` by id (module doc), golden questions first, in run order."""
    records = {r.case.id: r for r in run.records}
    units = [_golden_unit(r) for r in run.golden_records()]
    units += [_group_unit(g, records) for g in run.groups]
    return {u.id: u for u in units}


def _golden_unit(record: CaseRecord) -> Unit:
    verdict = GoldenVerdict.from_record(record)
    outcomes: dict[str, bool | None] = {}
    for name, attr in GOLDEN_CHECKS.items():
        value = None if verdict is None else getattr(verdict, attr)
        if verdict is None or value is not None:
            outcomes[f"golden:{name}"] = None if value is None else not value
    for tag in record.case.tags:
        outcomes[f"tag:{tag}"] = outcomes["golden:pass"]
    evidence: dict[str, Any] = {}
    if record.error is not None:
        evidence["error"] = f"{record.error.type}: {record.error.message}"
    elif record.output is not None:
        evidence["answer"] = record.output.answer
        evidence.update(verdict.model_dump(include={"refused", "unmet"}) if verdict else {})
    return Unit(
        id=f"golden:{record.case.id}",
        question=record.case.question,
        outcomes=outcomes,
        evidence=_abridge(evidence),
    )


def _group_unit(group: ProbeGroup, records: Mapping[str, CaseRecord]) -> Unit:
    cases = [records[c].case for c in group.case_ids if c in records]
    outcomes: dict[str, bool | None] = {f"probe:{group.probe}": group.failed}
    attack_type = group.evidence.get("attack_type")
    if isinstance(attack_type, str):
        outcomes[f"attack_type:{attack_type}"] = group.failed
    for tag in sorted({t for c in cases for t in c.tags}):
        outcomes[f"tag:{tag}"] = group.failed
    question = group.evidence.get("question")
    if not isinstance(question, str):
        question = cases[0].question if cases else ""
    return Unit(
        id=f"{group.probe}:{group.group}",
        question=question,
        outcomes=outcomes,
        evidence=unit_evidence(group.evidence),
    )


def unit_evidence(evidence: Mapping[str, Any]) -> dict[str, Any]:
    """A probe group's evidence, abridged for a report: its scalar fields (nested ones by
    dotted path), the keys a reader needs first (``_PREFERRED``) leading, texts cut."""
    return _abridge(dict(_flatten(evidence, "")))


def _flatten(value: Mapping[str, Any], prefix: str) -> Iterable[tuple[str, Any]]:
    for key, item in value.items():
        path = f"{prefix}{key}"
        if isinstance(item, Mapping):
            yield from _flatten(item, path + ".")
        elif isinstance(item, (str, int, float, bool)) or item is None:
            yield path, item
        elif isinstance(item, list) and all(isinstance(x, (str, int, float)) for x in item):
            yield path, item


def _abridge(fields: Mapping[str, Any]) -> dict[str, Any]:
    def rank(key: str) -> int:
        last = key.rsplit(".", 1)[-1]
        return _PREFERRED.index(last) if last in _PREFERRED else len(_PREFERRED)

    chosen = sorted(fields, key=rank)[:_MAX_FIELDS]  # stable: ties keep the evidence's order
    out: dict[str, Any] = {}
    for key in sorted(chosen, key=list(fields).index):
        value = fields[key]
        if isinstance(value, str) and len(value) > _MAX_TEXT:
            value = value[: _MAX_TEXT - 1] + "…"
        if isinstance(value, float) and math.isnan(value):
            value = None
        out[key] = value
    return out


def slice_rates(units: Mapping[str, Unit]) -> dict[str, SliceRate]:
    """Each slice's failure rate in one run (Wilson over its scored units), sorted by slice."""
    members: dict[str, list[tuple[str, bool | None]]] = {}
    for unit in units.values():
        for name, failed in unit.outcomes.items():
            members.setdefault(name, []).append((unit.id, failed))
    rates = {}
    for name in sorted(members):
        scored = [(uid, f) for uid, f in members[name] if f is not None]
        failing = [uid for uid, f in scored if f]
        rates[name] = SliceRate(
            slice=name,
            kind=slice_kind(name),
            rate=wilson(len(failing), len(scored)),
            unscored=len(members[name]) - len(scored),
            failing=failing,
        )
    return rates

"""Probes: adversarial case generators, one module per failure family.

``load_probes()`` is the registry: the built-in probes (each module registers its own with
``@probe``) and those of installed packages, found through the ``probeguard.probes``
entry-point group; ``make_probe(name, settings)`` builds one with its settings. A package
declares its probes in its ``pyproject.toml``::

    [project.entry-points."probeguard.probes"]
    numeric_drift = "my_package.probes:NumericDrift"

The value is a ``Probe`` subclass (registered under the entry point's name unless ``@probe``
registered it already) or a module whose import registers probes with ``@probe``; either way
a probe of the entry point's name must be registered after loading it. Installed probes run
by default, like the built-in ones (``probes.enabled`` chooses).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import Any

from probeguard.core.errors import ProbeGuardError
from probeguard.core.plugins import construct
from probeguard.probes.base import (
    FAMILIES,
    FIX_HINTS,
    PROBES,
    Headline,
    JudgeContext,
    Probe,
    ProbeContext,
    ProbeVerdict,
    group_records,
    probe,
)
from probeguard.probes.models import (
    EvidenceModel,
    ProbeEvidence,
    ProbeRunSummary,
    ProbeSummary,
    SkippedProbe,
    SummaryModel,
)

BUILTIN_MODULES = (
    "probeguard.probes.chunk_fracture",
    "probeguard.probes.retrieval_gap",
    "probeguard.probes.corpus_contradiction",
    "probeguard.probes.prompt_hijack",
    "probeguard.probes.context_sensitivity",
    "probeguard.probes.poisoning",
    "probeguard.probes.unanswerable",
    "probeguard.probes.benign_control",
    "probeguard.probes.attack_types",
)

ENTRY_POINT_GROUP = "probeguard.probes"
"""The entry-point group third-party probes register in."""


class ProbeLoadError(ProbeGuardError):
    """A probe entry point that cannot be loaded, or that registers no probe of its name."""


def load_probes() -> dict[str, type[Probe[Any]]]:
    """Every registered probe by name: the built-in ones (in ``BUILTIN_MODULES`` order), then
    the others in registration order. Imports the built-in modules and loads the entry
    points of the ``probeguard.probes`` group (``ProbeLoadError`` naming the one that
    fails)."""
    for module in BUILTIN_MODULES:
        importlib.import_module(module)
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        _load_entry_point(entry_point)
    builtin = sorted(
        (name for name, cls in PROBES.items() if cls.__module__ in BUILTIN_MODULES),
        key=lambda name: BUILTIN_MODULES.index(PROBES[name].__module__),
    )
    return {**{name: PROBES[name] for name in builtin}, **PROBES}


def _load_entry_point(entry_point: EntryPoint) -> None:
    dist = f", package {entry_point.dist.name}" if entry_point.dist is not None else ""
    where = (
        f"probe entry point {entry_point.name!r} = {entry_point.value!r} "
        f"(group {ENTRY_POINT_GROUP!r}{dist})"
    )
    try:
        loaded = entry_point.load()
    except Exception as exc:  # whatever a third-party import raises
        raise ProbeLoadError(f"cannot load the {where}: {type(exc).__name__}: {exc}") from exc
    if isinstance(loaded, type) and issubclass(loaded, Probe):
        if PROBES.get(loaded.name) is not loaded:
            try:
                probe(entry_point.name)(loaded)
            except ValueError as exc:
                raise ProbeLoadError(f"cannot register the {where}: {exc}") from None
    elif not isinstance(loaded, ModuleType):
        raise ProbeLoadError(
            f"the {where} names a {type(loaded).__name__}, not a Probe subclass or a module"
        )
    if entry_point.name not in PROBES:
        raise ProbeLoadError(f"the {where} registers no probe named {entry_point.name!r}")


def make_probe(name: str, settings: Mapping[str, Any] | None = None) -> Probe[Any]:
    """The probe ``name`` configured with ``settings`` (its constructor parameters)."""

    registry = load_probes()
    if name not in registry:
        raise ValueError(f"unknown probe {name!r}; known: {', '.join(sorted(registry))}")
    instance: Probe[Any] = construct(registry[name], "probe", name, dict(settings or {}))
    return instance


def probe_classes(names: Iterable[str]) -> dict[str, type[Probe[Any]]]:
    """The registered probes among ``names``, by name, in the order given (names that are
    not registered are left out: whoever runs them reports the unknown name)."""
    registry = load_probes()
    return {name: registry[name] for name in names if name in registry}


__all__ = [
    "BUILTIN_MODULES",
    "ENTRY_POINT_GROUP",
    "EvidenceModel",
    "FAMILIES",
    "FIX_HINTS",
    "Headline",
    "JudgeContext",
    "PROBES",
    "Probe",
    "ProbeContext",
    "ProbeEvidence",
    "ProbeLoadError",
    "ProbeRunSummary",
    "ProbeSummary",
    "ProbeVerdict",
    "SkippedProbe",
    "SummaryModel",
    "group_records",
    "load_probes",
    "make_probe",
    "probe",
    "probe_classes",
]

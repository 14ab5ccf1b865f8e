"""Probes: adversarial case generators, one module per failure family.

``load_probes()`` imports the built-in probe modules (each registers itself with
``@probe``); ``make_probe(name, settings)`` builds one with its settings.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from probeguard.core.plugins import construct
from probeguard.probes.base import (
    PROBES,
    JudgeContext,
    Probe,
    ProbeContext,
    ProbeVerdict,
    group_records,
    probe,
)

BUILTIN_MODULES = (
    "probeguard.probes.chunk_fracture",
    "probeguard.probes.retrieval_gap",
    "probeguard.probes.corpus_contradiction",
    "probeguard.probes.prompt_hijack",
    "probeguard.probes.poisoning",
    "probeguard.probes.unanswerable",
    "probeguard.probes.benign_control",
    "probeguard.probes.attack_types",
)


def load_probes() -> dict[str, type[Probe]]:
    """The registry, with every built-in probe imported."""
    for module in BUILTIN_MODULES:
        importlib.import_module(module)
    return PROBES


def make_probe(name: str, settings: Mapping[str, Any] | None = None) -> Probe:
    """The probe ``name`` configured with ``settings`` (its constructor parameters)."""

    registry = load_probes()
    if name not in registry:
        raise ValueError(f"unknown probe {name!r}; known: {', '.join(sorted(registry))}")
    instance: Probe = construct(registry[name], "probe", name, dict(settings or {}))
    return instance


__all__ = [
    "BUILTIN_MODULES",
    "JudgeContext",
    "PROBES",
    "Probe",
    "ProbeContext",
    "ProbeVerdict",
    "group_records",
    "load_probes",
    "make_probe",
    "probe",
]

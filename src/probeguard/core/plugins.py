"""Building parts from config specs: one mechanism for every factory.

A registry maps a config name to ``(module, class)``; the module is imported only when the
name is asked for, so a part whose extra is missing costs nothing until it is used. A spec is
``{"name": ..., **constructor parameters}``; an unknown name lists the known ones and an
unknown parameter lists the accepted ones (instead of a bare ``TypeError``).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from typing import Any

Registry = Mapping[str, tuple[str, str]]


def load_class(registry: Registry, kind: str, name: Any) -> type:
    """The class registered as ``name``; ``ValueError`` listing the known names."""
    if name not in registry:
        raise ValueError(f"unknown {kind} {name!r}; known: {', '.join(sorted(registry))}")
    module, attr = registry[name]
    cls: type = getattr(importlib.import_module(module), attr)
    return cls


def construct(cls: type[Any], kind: str, name: str, params: Mapping[str, Any]) -> Any:
    """``cls(**params)``, rejecting parameters its constructor does not take."""
    accepted = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ValueError(
            f"{kind} {name!r}: unknown parameter(s) "
            f"{', '.join(repr(u) for u in unknown)}; accepted: {', '.join(accepted)}"
        )
    return cls(**params)


def build(registry: Registry, kind: str, spec: Mapping[str, Any]) -> Any:
    """The part named by ``spec["name"]``, constructed with the spec's other keys."""
    if not isinstance(spec, Mapping) or "name" not in spec:
        raise ValueError(f"a {kind} spec needs a 'name' (known: {', '.join(sorted(registry))})")
    params = dict(spec)
    name = params.pop("name")
    return construct(load_class(registry, kind, name), kind, name, params)

"""Building parts from config specs: one mechanism for every factory.

A registry maps a config name to ``(module, class)``; the module is imported only when the
name is asked for, so a part whose extra is missing costs nothing until it is used. A spec is
``{"name": ..., **constructor parameters}``; an unknown name lists the known ones and an
unknown parameter lists the accepted ones (instead of a bare ``TypeError``). Each parameter
is checked against its annotation (pydantic's lax mode: ``2`` is a fine ``float``, ``"abc"``
is not) before the constructor runs, and a ``ValueError``/``TypeError`` the constructor
raises names the first parameter its message mentions. Every such problem is a
``PartError`` whose field is ``<kind>.<parameter>``.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import ConfigDict, TypeAdapter, ValidationError

from probeguard.core.errors import PartError

Registry = Mapping[str, tuple[str, str]]

_LAX = ConfigDict(arbitrary_types_allowed=True)


def load_class(registry: Registry, kind: str, name: Any) -> type:
    """The class registered as ``name``; ``PartError`` listing the known names."""
    if not isinstance(name, str) or name not in registry:
        raise PartError(
            f"unknown {kind} {name!r}; known: {', '.join(sorted(registry))}",
            field=f"{_key(kind)}.name",
        )
    module, attr = registry[name]
    cls: type = getattr(importlib.import_module(module), attr)
    return cls


def _key(kind: str) -> str:
    return kind.replace(" ", "_")


@functools.lru_cache(maxsize=256)
def _adapters(cls: Any) -> dict[str, TypeAdapter[Any]]:
    """Parameter → a validator of its annotation; parameters whose annotation cannot be
    resolved or has no schema are left out (not checked)."""
    try:
        hints = typing.get_type_hints(cls.__init__)
    except Exception:  # a name imported under TYPE_CHECKING only: check nothing
        return {}
    out: dict[str, TypeAdapter[Any]] = {}
    for param, hint in hints.items():
        if param == "return":
            continue
        try:
            out[param] = TypeAdapter(hint, config=_LAX)
        except Exception:  # pydantic has no schema for this annotation
            continue
    return out


def _check_types(cls: Any, kind: str, name: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` validated against the constructor's annotations; a scalar takes its
    validated form (lax: ``"0.5"`` for a ``float`` becomes ``0.5``), any other value (a list,
    a model, a part) passes as it is once valid."""
    adapters = _adapters(cls)
    out = dict(params)
    for param, value in params.items():
        adapter = adapters.get(param)
        if adapter is None:
            continue
        try:
            valid = adapter.validate_python(value)
        except ValidationError as exc:
            reason = exc.errors()[0]["msg"]
            raise PartError(
                f"{kind} {name!r}: {param}={str(value)[:60]!r}: {reason}",
                field=f"{_key(kind)}.{param}",
            ) from None
        if isinstance(value, (str, int, float)):  # bool is an int
            out[param] = valid
    return out


def _named_param(message: str, accepted: list[str]) -> str | None:
    """The accepted parameter the message names first (as a whole word), if any."""
    found = [
        (m.start(), p)
        for p in accepted
        if (m := re.search(rf"(?<![\w.]){re.escape(p)}(?!\w)", message)) is not None
    ]
    return min(found)[1] if found else None


def construct(cls: type[Any], kind: str, name: str, params: Mapping[str, Any]) -> Any:
    """``cls(**params)``, rejecting unknown parameters and values of the wrong type."""
    accepted = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise PartError(
            f"{kind} {name!r}: unknown parameter(s) "
            f"{', '.join(repr(u) for u in unknown)}; accepted: {', '.join(accepted)}",
            field=f"{_key(kind)}.{unknown[0]}",
        )
    checked = _check_types(cls, kind, name, params)
    try:
        return cls(**checked)
    except PartError:
        raise
    except (ValueError, TypeError) as exc:
        param = _named_param(str(exc), list(params) or accepted)
        field = f"{_key(kind)}.{param}" if param else _key(kind)
        raise PartError(f"{kind} {name!r}: {exc}", field=field) from None


def build(registry: Registry, kind: str, spec: Mapping[str, Any]) -> Any:
    """The part named by ``spec["name"]``, constructed with the spec's other keys."""
    if not isinstance(spec, Mapping) or "name" not in spec:
        raise PartError(
            f"a {kind} spec needs a 'name' (known: {', '.join(sorted(registry))})",
            field=_key(kind),
        )
    params = dict(spec)
    name = params.pop("name")
    return construct(load_class(registry, kind, name), kind, name, params)

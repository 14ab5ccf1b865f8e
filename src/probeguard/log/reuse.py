"""A record as its ``run.jsonl`` line reads back, built without reading the line back.

``logged_with_line`` needs the record a resumed run would read from the line: its floats
rounded (``core.floats``), free-form values as JSON has them. Parsing the line gives that,
but costs a validation and a second object tree per record that a run then keeps (the
collector walks it again and again: ~30 µs a case on 2 shared cores, issue 18). Most records
need no parse: ``reuse(model, tree)`` walks the model beside its fresh python-mode dump
``tree``, rounds the tree's floats in place (so the line is the one ``normalise_floats`` gives),
and returns the model itself when nothing changes, or a ``model_copy`` holding the rounded
floats and the rounded free-form values (JSON-native containers from ``tree``), sharing every
unchanged part. It raises ``NotReusable`` where it cannot be sure the result equals the
parse, and the caller parses the line as before; the tree is then partly rounded, which
``normalise_floats_in_place`` finishes (rounding is idempotent).

Sure means, field by field (the field's annotation, read once per model class):

* a model field (``M``, ``M | None``): the value's class is ``M`` (a subclass would read
  back as ``M``) and its dump is a dict: walked the same way;
* a scalar field (``str``, ``int``, ``float``, ``bool``, ``None``, ``Literal``, an enum,
  unions of these): the value's exact type is one the annotation names (a float is
  rounded, NaN and ±inf kept) and, for a class with its own serializer, the dump holds
  the same value;
* a typed sequence (``tuple[X, ...]``, ``list[X]``, X a scalar or a model class): the value
  is that container, each item as above (JSON reads a list back into a tuple field);
* a free-form dict (``dict[str, Any]``): str keys, and only ``dict``, ``list``, ``str``,
  ``int``, ``bool``, ``None`` and ``float`` inside (a tuple, a set, a model, an enum or a
  numpy value reads back as something else);
* a field the dump leaves out (a serializer that drops empty values) holds its default,
  and the dump has no key that is not a field; no alias, no extra or private values.

Any other annotation makes its class unsure. Validators are taken to be idempotent on a
model's own dump (pydantic's round trip; ``Variation`` sorts ids and normalises defences).
The equality is checked against the parse on awkward records in ``tests/log/test_reuse.py``.
"""

from __future__ import annotations

import enum
import functools
import types
import typing
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from probeguard.core.floats import normalise_floats

__all__ = ["NotReusable", "reuse"]

_NONE = type(None)
_SCALARS = (str, int, float, bool)
_DROPPED: Any = object()


class NotReusable(Exception):
    """The walk cannot be sure its result equals the parse of the line."""


@dataclass(frozen=True, slots=True)
class _Plan:
    """What the fields of one model class may hold, grouped by how they are checked: exact
    scalar types (``checked``; ``floats`` when a float is allowed), model classes
    (``models``), sequences (name, tuple or list, item types, whether items are models),
    free-form dicts (name, None allowed). ``custom``: the class has its own serializer, so
    a field may be left out of the dump (it must then hold ``defaults[name]``) and each
    present scalar is compared with its dump."""

    names: frozenset[str]
    checked: tuple[tuple[str, frozenset[type]], ...]
    floats: tuple[tuple[str, frozenset[type]], ...]
    models: tuple[tuple[str, frozenset[type]], ...]
    sequences: tuple[tuple[str, type, frozenset[type], bool], ...]
    frees: tuple[tuple[str, bool], ...]
    defaults: dict[str, Any]
    custom: bool


def _members(annotation: Any) -> tuple[Any, ...]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return typing.get_args(annotation)
    return (annotation,)


def _scalar_types(annotation: Any) -> frozenset[type] | None:
    """The exact types a scalar annotation (or a union of them) allows, or None."""
    allowed: set[type] = set()
    for member in _members(annotation):
        if member is _NONE or member in _SCALARS:
            allowed.add(member)
        elif typing.get_origin(member) is Literal:
            allowed.update(type(v) for v in typing.get_args(member))
        elif isinstance(member, type) and issubclass(member, enum.Enum):
            allowed.add(member)
        else:
            return None
    return frozenset(allowed)


def _is_model(member: Any) -> bool:
    return isinstance(member, type) and issubclass(member, BaseModel)


def _place(groups: dict[str, list[Any]], name: str, annotation: Any) -> bool:
    """Put the field in its group (``_Plan``); False when it is none of the sure shapes."""
    scalars = _scalar_types(annotation)
    if scalars is not None:
        groups["floats" if float in scalars else "checked"].append((name, scalars))
        return True
    members = [m for m in _members(annotation) if m is not _NONE]
    optional = frozenset({_NONE}) if len(members) < len(_members(annotation)) else frozenset()
    if len(members) != 1:
        return False
    (member,) = members
    origin, args = typing.get_origin(member), typing.get_args(member)
    if _is_model(member):
        groups["models"].append((name, frozenset({member}) | optional))
    elif origin is dict and args == (str, Any):
        groups["frees"].append((name, bool(optional)))
    elif origin is list or origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        items = frozenset({args[0]}) if _is_model(args[0]) else _scalar_types(args[0])
        if items is None:
            return False
        groups["sequences"].append((name, origin, items | optional, _is_model(args[0])))
    else:
        return False
    return True


@functools.cache
def _plan(cls: type[BaseModel]) -> _Plan | None:
    """The ``_Plan`` of ``cls``, or None when a field is unsure (module docstring)."""
    groups: dict[str, list[Any]] = {k: [] for k in ("checked", "floats", "models")}
    groups.update(sequences=[], frees=[])
    for name, info in cls.model_fields.items():
        if info.alias is not None or info.validation_alias is not None or info.exclude:
            return None
        if info.exclude_if is not None or not _place(groups, name, info.annotation):
            return None
    decorators = cls.__pydantic_decorators__
    if cls.model_computed_fields or decorators.field_serializers:
        return None
    return _Plan(
        names=frozenset(cls.model_fields),
        **{k: tuple(v) for k, v in groups.items()},
        defaults={n: f.get_default(call_default_factory=True) for n, f in cls.model_fields.items()},
        custom=bool(decorators.model_serializers),
    )


def _free(value: Any, dumped: Any) -> Any:
    """``value`` when it is JSON-native with rounded floats; else ``dumped`` (a fresh
    JSON-native tree), its floats rounded in place. Raises ``NotReusable`` otherwise."""
    kind = type(value)
    if kind is not type(dumped):
        raise NotReusable
    if kind is str or kind is int or kind is bool or value is None:
        if dumped is value or dumped == value:
            return value
        raise NotReusable
    if kind is float:
        rounded = normalise_floats(value)
        return value if rounded == value or rounded != rounded else rounded
    if kind is not dict and kind is not list:
        raise NotReusable
    if len(dumped) != len(value):
        raise NotReusable
    changed = False
    for key, item in value.items() if kind is dict else enumerate(value):
        if kind is dict and type(key) is not str:
            raise NotReusable
        new = _free(item, dumped.get(key, _DROPPED) if kind is dict else dumped[key])
        if new is not item:
            dumped[key] = new
            changed = True
    return dumped if changed else value


def _items(value: Any, dumped: Any, allowed: frozenset[type], models: bool) -> Any:
    """A sequence field: ``value``, or a new one of its type holding rounded items."""
    if type(dumped) not in (list, tuple) or len(dumped) != len(value):
        raise NotReusable
    changed = False
    items = list(value)
    for i, item in enumerate(value):
        kind = type(item)
        if kind not in allowed:
            raise NotReusable
        if models:
            items[i] = reuse(item, dumped[i])
        elif kind is float:
            items[i] = _free(item, dumped[i])
        elif dumped[i] is not item and dumped[i] != item:
            raise NotReusable
        changed = changed or items[i] is not item
    return type(value)(items) if changed else value


def _check_dump(plan: _Plan, values: dict[str, Any], tree: dict[str, Any]) -> None:
    """A custom serializer's dump: only field keys; a field left out holds its default;
    a scalar in the dump is the field's value."""
    if not tree.keys() <= plan.names:
        raise NotReusable
    for name in plan.names - tree.keys():
        default, value = plan.defaults[name], values[name]
        if type(value) is not type(default) or value != default:
            raise NotReusable
    for name, _ in plan.checked:
        dumped = tree.get(name, _DROPPED)
        if dumped is not _DROPPED and dumped is not values[name] and dumped != values[name]:
            raise NotReusable


def reuse(model: BaseModel, tree: Any) -> Any:
    """``model`` as the JSON of ``tree`` (its fresh python-mode dump) reads back: ``model``
    itself, or a copy holding rounded floats; the floats of ``tree`` are rounded in place
    (and a rounded value written back into it). Raises ``NotReusable`` when unsure."""
    plan = _plan(type(model))
    if plan is None or type(tree) is not dict:
        raise NotReusable
    if model.__pydantic_extra__ or getattr(model, "__pydantic_private__", None):
        raise NotReusable
    values = model.__dict__
    if plan.custom:
        _check_dump(plan, values, tree)
    elif len(tree) != len(plan.names):
        raise NotReusable
    for name, allowed in plan.checked:
        if type(values[name]) not in allowed:
            raise NotReusable
    changes: dict[str, Any] = {}
    for name, allowed in plan.floats:
        value = values[name]
        kind = type(value)
        if kind not in allowed:
            raise NotReusable
        if kind is float and name in tree:
            new = _free(value, tree[name])
            if new is not value:
                changes[name] = tree[name] = new
    for name, allowed in plan.models:
        value = values[name]
        if type(value) not in allowed:
            raise NotReusable
        if value is not None and name in tree:
            new = reuse(value, tree[name])
            if new is not value:
                changes[name] = new
    for name, origin, allowed, models in plan.sequences:
        value = values[name]
        if (
            value is not None
            and type(value) is not origin
            or value is None
            and _NONE not in allowed
        ):
            raise NotReusable
        if value and name in tree:
            new = _items(value, tree[name], allowed, models)
            if new is not value:
                changes[name] = new
                if not models:
                    tree[name] = new
    for name, optional in plan.frees:
        value = values[name]
        if type(value) is not dict and not (optional and value is None):
            raise NotReusable
        if value and name in tree:
            new = _free(value, tree[name])
            if new is not value:
                changes[name] = new
    return model.model_copy(update=changes) if changes else model

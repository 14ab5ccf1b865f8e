"""A tiny path language for picking values out of a JSON response.

Grammar (a small subset of JSONPath, enough for RAG endpoints)::

    path     := ["$"] [key] segment*
    segment  := "." key | "[" integer "]" | "[*]" | ".*" | '["' any text '"]'
    key      := one or more characters other than . [ ] "

Examples: ``answer``, ``data.choices[0].message.content``, ``results[*].text``,
``choices[-1]``, ``meta["x.y"]`` (a key holding a dot), ``""`` or ``"$"`` (the whole document).

Semantics: ``key`` looks up an object member, ``[n]`` a list item (negative counts from the
end), ``[*]`` every item of a list and ``.*`` every value of an object (or every item of a
list). A path with a wildcard returns the *flat* list of its matches, as JSONPath does:
``results[*].passages[*].text`` is one list of texts, not a list of lists. A missing key, an
index out of range or a type mismatch raises ``PathError`` (a non-transient
``PipelineCallError``) naming the path, where it stopped and what was there instead
(the available keys, or the list length).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any

from probeguard.core.errors import PipelineCallError

__all__ = [
    "PathError",
    "PathSyntaxError",
    "Key",
    "Index",
    "Wildcard",
    "parse_path",
    "resolve",
    "lookup",
    "MISSING",
    "has_wildcard",
]

MISSING: Any = object()
"""What ``lookup`` returns where ``resolve`` would raise ``PathError``."""


class PathError(PipelineCallError):
    """A path does not match the document (missing key, index out of range, wrong type)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, transient=False)


class PathSyntaxError(ValueError):
    """A path string is not well formed (a configuration mistake, caught when parsing)."""


@dataclass(frozen=True, slots=True)
class Key:
    name: str

    def render(self) -> str:
        if re.fullmatch(r"[^.\[\]\"*]+", self.name):
            return f".{self.name}"
        return f"[{json.dumps(self.name)}]"


@dataclass(frozen=True, slots=True)
class Index:
    index: int

    def render(self) -> str:
        return f"[{self.index}]"


@dataclass(frozen=True, slots=True)
class Wildcard:
    def render(self) -> str:
        return "[*]"


Segment = Key | Index | Wildcard

_TOKEN = re.compile(
    r"""
    \.(?P<key>[^.\[\]"*]+)           # .key
    | \.\*                           # .*
    | \[\*\]                         # [*]
    | \[(?P<index>-?\d+)\]           # [n]
    | \["(?P<quoted>(?:[^"\\]|\\.)*)"\]  # ["any key"]
    """,
    re.VERBOSE,
)


@functools.lru_cache(maxsize=1024)
def parse_path(path: str) -> tuple[Segment, ...]:
    """Parse ``path`` into segments (cached); raises ``PathSyntaxError`` naming the rest of the
    path that did not parse."""
    text = path.strip()
    if text.startswith("$"):
        text = text[1:]
    elif text and text[0] not in ".[":
        text = "." + text  # a leading bare key
    elif text.startswith("."):
        raise PathSyntaxError(f"bad path {path!r}: it starts with '.'")
    segments: list[Segment] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise PathSyntaxError(
                f"bad path {path!r}: cannot parse {text[pos:]!r}; "
                'expected .key, [n], [*], .* or ["key"]'
            )
        if m.group("key") is not None:
            segments.append(Key(m.group("key")))
        elif m.group("index") is not None:
            segments.append(Index(int(m.group("index"))))
        elif m.group("quoted") is not None:
            segments.append(Key(json.loads(f'"{m.group("quoted")}"')))
        else:
            segments.append(Wildcard())
        pos = m.end()
    return tuple(segments)


def has_wildcard(path: str | tuple[Segment, ...]) -> bool:
    segments = parse_path(path) if isinstance(path, str) else path
    return any(isinstance(s, Wildcard) for s in segments)


def _where(segments: tuple[Segment, ...], upto: int) -> str:
    rendered = "".join(s.render() for s in segments[:upto])
    return "$" + rendered


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        keys = sorted(str(k) for k in value)
        shown = ", ".join(keys[:20]) + (f", ... ({len(keys)} keys)" if len(keys) > 20 else "")
        return f"an object with keys [{shown}]" if keys else "an empty object"
    if isinstance(value, list):
        return f"a list of {len(value)} item{'' if len(value) == 1 else 's'}"
    if value is None:
        return "null"
    return f"a {type(value).__name__} ({str(value)[:60]!r})"


def resolve(data: Any, path: str | tuple[Segment, ...], *, label: str | None = None) -> Any:
    """The value at ``path`` in ``data`` (a list of matches when the path has a wildcard).

    ``label`` names the path in error messages (e.g. ``"answer_path"``)."""
    segments = parse_path(path) if isinstance(path, str) else path
    matches = _walk(data, segments, 0, path, label)
    return matches if any(isinstance(s, Wildcard) for s in segments) else matches[0]


def lookup(data: Any, segments: tuple[Segment, ...]) -> Any:
    """``resolve(data, segments)``, or ``MISSING`` where that raises ``PathError``, without
    building the error (an optional field that a response leaves out is the common case:
    formatting the message cost more than the rest of reading a context). Paths without a
    wildcard are walked here with ``_walk``'s rules (a key needs an object holding it, an
    index a list it is in range of); a wildcard path goes through ``resolve``."""
    if any(isinstance(s, Wildcard) for s in segments):
        try:
            return resolve(data, segments)
        except PathError:
            return MISSING
    value = data
    for seg in segments:
        if isinstance(seg, Key):
            if not isinstance(value, dict) or seg.name not in value:
                return MISSING
            value = value[seg.name]
        else:
            assert isinstance(seg, Index)
            if not isinstance(value, list) or not -len(value) <= seg.index < len(value):
                return MISSING
            value = value[seg.index]
    return value


def _fail(path: str | tuple[Segment, ...], label: str | None, message: str) -> PathError:
    shown = path if isinstance(path, str) else _where(path, len(path))
    name = f"{label} {shown!r}" if label else f"path {shown!r}"
    return PathError(f"{name}: {message}")


def _walk(
    value: Any,
    segments: tuple[Segment, ...],
    i: int,
    path: str | tuple[Segment, ...],
    label: str | None,
) -> list[Any]:
    if i == len(segments):
        return [value]
    seg = segments[i]
    if isinstance(seg, Key):
        if not isinstance(value, dict):
            raise _fail(
                path,
                label,
                f"expected an object at {_where(segments, i)} to look up "
                f"{seg.name!r}, found {_describe(value)}",
            )
        if seg.name not in value:
            raise _fail(
                path,
                label,
                f"key {seg.name!r} not found at {_where(segments, i)}, which is {_describe(value)}",
            )
        return _walk(value[seg.name], segments, i + 1, path, label)
    if isinstance(seg, Index):
        if not isinstance(value, list):
            raise _fail(
                path,
                label,
                f"expected a list at {_where(segments, i)} for index "
                f"{seg.index}, found {_describe(value)}",
            )
        if not -len(value) <= seg.index < len(value):
            raise _fail(
                path,
                label,
                f"index {seg.index} out of range at "
                f"{_where(segments, i)}, which is {_describe(value)}",
            )
        return _walk(value[seg.index], segments, i + 1, path, label)
    if isinstance(value, list):
        items = value
    elif isinstance(value, dict):
        items = list(value.values())
    else:
        raise _fail(
            path,
            label,
            f"expected a list or an object at {_where(segments, i)} for "
            f"a wildcard, found {_describe(value)}",
        )
    out: list[Any] = []
    for item in items:
        out.extend(_walk(item, segments, i + 1, path, label))
    return out

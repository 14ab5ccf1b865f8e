"""Loading a ``ScanConfig`` with the precedence defaults < file < environment < CLI flags.

Environment variables: ``PROBEGUARD_SEED=3``, nested keys with double underscores,
``PROBEGUARD_RUNNER__CONCURRENCY=16``, ``PROBEGUARD_PIPELINE__REFERENCE__TOP_K=10``; values
are parsed as YAML scalars (``true``, ``16``, ``0.5``). A validation error names the file, the
line of the offending key in the YAML, and the field path.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from probeguard.config.gate import GatePolicy
from probeguard.config.models import ScanConfig
from probeguard.core.errors import InputError
from probeguard.corpus.file_reading import decode_utf8

ENV_PREFIX = "PROBEGUARD_"


def deep_merge(base: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """``override`` wins; nested dicts merge key by key."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def env_overrides(environ: Mapping[str, str]) -> dict[str, Any]:
    """Nested overrides from ``PROBEGUARD_A__B=value`` variables (keys lower-cased)."""
    out: dict[str, Any] = {}
    for name, raw in sorted(environ.items()):
        if not name.startswith(ENV_PREFIX) or name == "PROBEGUARD_SHARED_DATA":
            continue
        path = [p.lower() for p in name[len(ENV_PREFIX) :].split("__") if p]
        if not path:
            continue
        try:
            value = yaml.safe_load(raw)
        except (yaml.YAMLError, RecursionError):
            value = raw
        node = out
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
    return out


def _key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Map each mapping-key path in a YAML document to its 1-based line. A node reached a
    second time (through an alias) is not walked again, so an alias bomb (nested aliases
    that expand exponentially) costs one visit per node."""
    lines: dict[tuple[str, ...], int] = {}
    seen: set[int] = set()

    def walk(node: yaml.Node, path: tuple[str, ...]) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                sub = path + (str(key.value),)
                lines[sub] = key.start_mark.line + 1
                walk(value, sub)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                lines[path + (str(i),)] = item.start_mark.line + 1
                walk(item, path + (str(i),))

    root = yaml.compose(text)
    if root is not None:
        walk(root, ())
    return lines


def read_config_text(path: str | Path) -> str:
    """The text of a config file (UTF-8; an unreadable file or an undecodable byte is an
    ``InputError`` naming the file and line)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read config: {exc.strerror or exc}", file=str(path)) from None
    return decode_utf8(data, path)


def read_config_file(path: str | Path, text: str | None = None) -> dict[str, Any]:
    """The raw mapping in a YAML config file (``text``: its text, when already read);
    errors name the file and line."""
    path = Path(path)
    if text is None:
        text = read_config_text(path)
    try:
        data = yaml.safe_load(text)
    except RecursionError:
        raise InputError("invalid YAML: nested too deeply", file=str(path)) from None
    except ValueError as exc:  # a YAML int of more digits than Python converts
        raise InputError(f"invalid YAML: {exc}", file=str(path)) from None
    except yaml.YAMLError as exc:
        raise InputError(
            f"invalid YAML: {_yaml_problem(exc)}", file=str(path), line=_yaml_line(exc, text)
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError("the config must be a mapping at the top level", file=str(path), line=1)
    return data


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """The problem a YAML error states, on one line."""
    problem = getattr(exc, "problem", None) or getattr(exc, "reason", None) or str(exc)
    return " ".join(str(problem).split())


def _yaml_line(exc: yaml.YAMLError, text: str) -> int | None:
    """The 1-based line of a YAML error: its mark, or a reader error's character position."""
    mark = getattr(exc, "problem_mark", None)
    if mark is not None:
        return int(mark.line) + 1
    position = getattr(exc, "position", None)
    return text.count("\n", 0, position) + 1 if isinstance(position, int) else None


def load_config(
    path: str | Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> ScanConfig:
    """defaults < file < environment < ``overrides`` (the CLI's flags). Relative paths in a
    config file are resolved against the file's folder."""
    data: dict[str, Any] = {}
    text = ""
    if path is not None:
        text = read_config_text(path)
        data = read_config_file(path, text)
        _resolve_relative_paths(data, Path(path).parent)
    env = os.environ if environ is None else environ
    data = deep_merge(data, env_overrides(env))
    data = deep_merge(data, dict(overrides or {}))
    try:
        return ScanConfig.model_validate(data)
    except ValidationError as exc:
        raise _validation_error(exc, path, text, env, overrides or {}) from None


def _leaf_paths(tree: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """The key paths of the leaves of a nested mapping."""
    out: set[tuple[str, ...]] = set()
    for key, value in tree.items():
        path = (*prefix, str(key))
        out |= _leaf_paths(value, path) if isinstance(value, Mapping) and value else {path}
    return out


def _validation_error(
    exc: ValidationError,
    path: str | Path | None,
    text: str,
    environ: Mapping[str, str],
    overrides: Mapping[str, Any],
) -> InputError:
    """The first error of ``exc``, named where the bad value came from: a command-line flag,
    a ``PROBEGUARD_*`` variable (which win over the file, in that order), or the config file
    and the line of the field's key."""
    err = exc.errors()[0]
    loc = tuple(str(p) for p in err["loc"])
    prefixes = [loc[:cut] for cut in range(len(loc), 0, -1)]
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    message, field = f"{err['msg']}{more}", ".".join(loc) or None
    if any(p in _leaf_paths(overrides) for p in prefixes):
        return InputError(message, file="<command line>", field=field)
    by_env = {
        tuple(p.lower() for p in name[len(ENV_PREFIX) :].split("__") if p): name
        for name in environ
        if name.startswith(ENV_PREFIX)
    }
    for prefix in prefixes:
        if prefix in by_env:
            return InputError(message, file=f"environment variable {by_env[prefix]}", field=field)
    key_lines = _key_lines(text) if text else {}
    line = next((key_lines[p] for p in prefixes if p in key_lines), None)
    return InputError(message, file=str(path) if path else "<config>", line=line, field=field)


def locate_in_file(error: InputError, path: str | Path | None) -> InputError:
    """``error`` (raised for a config field, e.g. by building the pipeline) with the config
    file and the line of that field added; unchanged when it already names a file, names no
    field, or there is no config file."""
    if path is None or error.file is not None or not error.field:
        return error
    line = None
    try:
        key_lines = _key_lines(read_config_text(path))
    except (InputError, yaml.YAMLError, RecursionError):
        key_lines = {}
    loc = tuple(error.field.split("."))
    for cut in range(len(loc), 0, -1):
        if loc[:cut] in key_lines:
            line = key_lines[loc[:cut]]
            break
    return InputError(error.reason, file=str(path), line=line, field=error.field)


def _resolve_relative_paths(data: dict[str, Any], base: Path) -> None:
    corpus = data.get("corpus")
    if isinstance(corpus, dict):
        for key in ("path", "questions", "attacks"):
            value = corpus.get(key)
            if isinstance(value, str) and not Path(value).is_absolute():
                corpus[key] = str((base / value).resolve())


def load_gate_policy(path: str | Path) -> GatePolicy:
    """The gate policy in a YAML file (its top level, or its ``gate:`` key). ``InputError``
    names the file, the line and the field of the first invalid setting."""
    data: Any = read_config_file(path)
    prefix: tuple[str, ...] = ()
    if "gate" in data:
        data, prefix = data["gate"] or {}, ("gate",)
    try:
        return GatePolicy.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = prefix + tuple(str(p) for p in err["loc"])
        lines = _key_lines(Path(path).read_text(encoding="utf-8"))
        line = next((lines[loc[:c]] for c in range(len(loc), 0, -1) if loc[:c] in lines), None)
        raise InputError(err["msg"], file=str(path), line=line, field=".".join(loc)) from None

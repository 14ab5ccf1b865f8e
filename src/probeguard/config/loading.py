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
        except yaml.YAMLError:
            value = raw
        node = out
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
    return out


def _key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Map each mapping-key path in a YAML document to its 1-based line."""
    lines: dict[tuple[str, ...], int] = {}

    def walk(node: yaml.Node, path: tuple[str, ...]) -> None:
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


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The raw mapping in a YAML config file; errors name the file and line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read config: {exc.strerror or exc}", file=str(path)) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(
            f"invalid YAML: {getattr(exc, 'problem', None) or exc}",
            file=str(path),
            line=mark.line + 1 if mark else None,
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError("the config must be a mapping at the top level", file=str(path), line=1)
    return data


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
        data = read_config_file(path)
        text = Path(path).read_text(encoding="utf-8")
        _resolve_relative_paths(data, Path(path).parent)
    data = deep_merge(data, env_overrides(os.environ if environ is None else environ))
    data = deep_merge(data, dict(overrides or {}))
    try:
        return ScanConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(str(p) for p in err["loc"])
        line = None
        if text:
            key_lines = _key_lines(text)
            for cut in range(len(loc), 0, -1):
                if loc[:cut] in key_lines:
                    line = key_lines[loc[:cut]]
                    break
        more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
        raise InputError(
            f"{err['msg']}{more}",
            file=str(path) if path else "<config>",
            line=line,
            field=".".join(loc) or None,
        ) from None


def locate_in_file(error: InputError, path: str | Path | None) -> InputError:
    """``error`` (raised for a config field, e.g. by building the pipeline) with the config
    file and the line of that field added; unchanged when it already names a file, names no
    field, or there is no config file."""
    if path is None or error.file is not None or not error.field:
        return error
    line = None
    try:
        key_lines = _key_lines(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
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

"""Config patches: a fix is a mapping of dotted scan-config paths to new values
(``{"pipeline.reference.defences.sanitise": true}``), as ``attribution.recommend`` writes them.

``apply_patch`` sets each path in a copy of the recorded config (a JSON mapping: a
``ScanConfig`` dump) and validates the result through ``ScanConfig``, so a bad path or value
is an ``InputError`` naming the path. A value *replaces* what is at its path (a patched
``chunker`` is the whole new chunker spec, not merged into the old one). Only paths under
``pipeline.reference.`` may be patched: a fix changes the reference pipeline, nothing else
of the scan (the cases, the probes, the judges stay as they were).

``merge_patches`` combines several fixes into one: the paths of every patch, in order; a
path two patches set to different values keeps the first and is reported as a conflict.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from probeguard.config.models import ScanConfig
from probeguard.core.errors import InputError

__all__ = ["PATCH_PREFIX", "apply_patch", "merge_patches", "parse_patch_option"]

PATCH_PREFIX = "pipeline.reference."


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def apply_patch(config: Mapping[str, Any], patch: Mapping[str, Any]) -> ScanConfig:
    """``config`` (a ``ScanConfig`` as JSON) with ``patch`` applied, validated (module
    docstring). ``InputError`` (field = the dotted path) on a path outside the reference
    pipeline, a path through a non-mapping, or a value ``ScanConfig`` rejects."""
    data: dict[str, Any] = copy.deepcopy(dict(config))
    for path in sorted(patch):
        if not path.startswith(PATCH_PREFIX) or len(path) == len(PATCH_PREFIX):
            raise InputError(
                f"a fix may only change the reference pipeline: the path must "
                f"start with '{PATCH_PREFIX}'",
                field=path,
            )
        node = data
        parts = path.split(".")
        for i, key in enumerate(parts[:-1]):
            child = node.get(key)
            if child is None:
                child = node[key] = {}
            if not isinstance(child, dict):
                raise InputError(f"'{'.'.join(parts[: i + 1])}' is not a mapping", field=path)
            node = child
        node[parts[-1]] = copy.deepcopy(patch[path])
    try:
        return ScanConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        field = next(
            (
                p
                for p in sorted(patch, key=len, reverse=True)
                if loc == p or loc.startswith(p + ".")
            ),
            loc or None,
        )
        raise InputError(
            f"the patched config is invalid at '{loc}': {err['msg']}", field=field
        ) from None


def merge_patches(
    patches: Sequence[Mapping[str, Any]],
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the merged patch, the conflicts ``[{path, kept, dropped}]``) (module docstring)."""
    merged: dict[str, Any] = {}
    conflicts: list[dict[str, Any]] = []
    for patch in patches:
        for path in sorted(patch):
            if path not in merged:
                merged[path] = copy.deepcopy(patch[path])
            elif _canonical(merged[path]) != _canonical(patch[path]):
                conflicts.append({"path": path, "kept": merged[path], "dropped": patch[path]})
    return merged, conflicts


def parse_patch_option(text: str) -> tuple[str, Any]:
    """``PATH=VALUE`` from the command line; VALUE is read as YAML (so ``true``, ``0.5``,
    ``{hybrid: 0.5}`` and plain strings all work). ``InputError`` when there is no ``=``."""
    import yaml

    path, sep, raw = text.partition("=")
    path = path.strip()
    if not sep or not path:
        raise InputError(f"--patch takes PATH=VALUE, got {text!r}", field="--patch")
    try:
        value = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise InputError(
            f"--patch {path}: the value is not valid YAML ({exc})", field="--patch"
        ) from None
    return path, value

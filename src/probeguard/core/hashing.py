"""Content hashing: canonical JSON and sha256 digests.

Every id, cache key and fingerprint in ProbeGuard is derived here, so that the same content
always gives the same digest across runs, machines and Python versions.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, no whitespace and no NaN, for hashing.

    Pydantic models and dataclasses should be converted (``model_dump(mode="json")`` or
    ``dataclasses.asdict``) by the caller; sets are not JSON and must be sorted lists.
    """
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def sha256_hex(*parts: str | bytes) -> str:
    """sha256 over the parts, each length-prefixed so that ("ab","c") != ("a","bc")."""
    return sha256_stream(parts)


def sha256_stream(parts: Iterable[str | bytes]) -> str:
    """``sha256_hex(*parts)``, fed one part at a time from an iterable, so that a large
    corpus's JSON is never held whole."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8") if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()


def digest(value: Any) -> str:
    """sha256 of the canonical JSON of a JSON-able value."""
    return sha256_hex(canonical_json(value))

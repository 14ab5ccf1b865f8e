"""The request side of the HTTP adapter (``pipeline.adapters.http``): the request template's
``{question}`` placeholder, ``${NAME}`` environment references in header values, and the
statuses and ``Retry-After`` header (RFC 9110 §10.2.3) that make a failure transient."""

from __future__ import annotations

import email.utils
import math
import os
import re
from datetime import UTC, datetime
from typing import Any

from probeguard.core.errors import PipelineCallError

__all__ = [
    "ENV_REF",
    "PLACEHOLDER",
    "TRANSIENT_STATUS",
    "expand_env",
    "parse_retry_after",
    "substitute",
    "uses_placeholder",
]

ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
PLACEHOLDER = "{question}"
TRANSIENT_STATUS = frozenset({408, 429})


def expand_env(value: str, *, header: str = "") -> str:
    """Replace ``${NAME}`` with ``os.environ["NAME"]``; a missing variable is a
    non-transient ``PipelineCallError`` naming it (and the header), never its value."""

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        try:
            return os.environ[name]
        except KeyError:
            where = f" (used by header '{header}')" if header else ""
            raise PipelineCallError(
                f"environment variable '{name}'{where} is not set", transient=False
            ) from None

    return ENV_REF.sub(sub, value)


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP date
    (RFC 9110 §10.2.3). Past dates give 0; anything unparseable gives None."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    now = now or datetime.now(UTC)
    return max(0.0, (when - now).total_seconds())


def substitute(template: Any, question: str) -> Any:
    """``template`` with every ``{question}`` inside its strings replaced by ``question``."""
    if isinstance(template, str):
        return template.replace(PLACEHOLDER, question)
    if isinstance(template, dict):
        return {k: substitute(v, question) for k, v in template.items()}
    if isinstance(template, list):
        return [substitute(v, question) for v in template]
    return template


def uses_placeholder(template: Any) -> bool:
    """Whether any string inside ``template`` holds ``{question}``."""
    if isinstance(template, str):
        return PLACEHOLDER in template
    if isinstance(template, dict):
        return any(uses_placeholder(v) for v in template.values())
    if isinstance(template, list):
        return any(uses_placeholder(v) for v in template)
    return False

"""Escaping untrusted text (questions, answers, injected documents) for reports.

Adversarial text must never become markup: in Markdown it could forge table rows, links,
images that fetch URLs, or raw HTML that a renderer executes.
"""

from __future__ import annotations

import math
import re
from typing import Any

from probeguard.core.estimate import Estimate
from probeguard.core.sanitize import visible_controls

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|~])")


def md_inline(text: str, max_len: int | None = 160) -> str:
    """One-line Markdown-safe text: control characters made visible escapes
    (``core.sanitize.visible_controls``), whitespace collapsed, every Markdown metacharacter
    (including ``|``, ``<``, ``>``, brackets and backticks) backslash-escaped, and cut to
    ``max_len`` characters (with an ellipsis) before escaping."""
    flat = " ".join(visible_controls(text).split())
    if max_len is not None and len(flat) > max_len:
        flat = flat[: max_len - 1].rstrip() + "…"
    return _MD_SPECIAL.sub(r"\\\1", flat)


def format_estimate(value: Any) -> str:
    """An Estimate (or its JSON) as `0.412 [0.301, 0.531] (n=40)`; other values escaped."""
    if isinstance(value, Estimate):
        return value.format(3)
    if isinstance(value, dict) and {"value", "low", "high", "n"} <= set(value):
        if value["value"] is None:  # NaN read back from run.json (written as null)
            return f"n/a (n={value['n']})"
        est = Estimate.model_validate(value)
        return est.format(3)
    if isinstance(value, float) and math.isnan(value):
        return "n/a"
    return md_inline(str(value))


def md_code_block(text: str, lang: str = "") -> str:
    """``text`` as a fenced Markdown code block, control characters made visible; the fence
    is one backtick longer than the longest backtick run inside, so nothing closes it early
    (CommonMark 0.31, "Fenced code blocks")."""
    body = visible_controls(text).rstrip("\n")
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{body}\n{fence}"

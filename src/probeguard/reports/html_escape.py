"""Making untrusted text inert in the HTML report.

Three contexts, three rules (OWASP XSS Prevention Cheat Sheet, rules 1, 2 and 3.1):

- HTML text and quoted attribute values: ``esc`` — control characters made visible
  (``core.sanitize.visible_controls``), then ``& < > " '`` as character references.
- Data in ``<script type="application/json">``: ``script_json`` — JSON with ``<``, ``>``, ``&``,
  U+2028 and U+2029 written as ``\\uXXXX`` escapes, so no ``</script>`` or ``<!--`` can end
  or change the element, and the text is still the same JSON to ``JSON.parse``.
- The inline script is allowed by its hash only (``script_hash``: ``'sha256-'`` + the
  base64 of the SHA-256 of its exact text, CSP Level 3 §8.3), never by ``'unsafe-inline'``.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from typing import Any

from probeguard.core.sanitize import visible_controls

__all__ = ["esc", "sanitise_tree", "script_hash", "script_json"]

_JSON_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def esc(text: object) -> str:
    """Text safe in HTML text and in a quoted attribute value."""
    return html.escape(visible_controls(str(text)), quote=True)


def sanitise_tree(value: Any) -> Any:
    """Every string in a JSON-like tree (keys too) with control characters made visible."""
    if isinstance(value, str):
        return visible_controls(value)
    if isinstance(value, dict):
        return {visible_controls(str(k)): sanitise_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [sanitise_tree(v) for v in value]
    return value


def script_json(data: Any) -> str:
    """``data`` as JSON that can sit inside ``<script type="application/json">`` (rule in
    the module doc); keys in the order given, no NaN (write None instead), no space after
    separators."""
    text = json.dumps(
        sanitise_tree(data), ensure_ascii=False, allow_nan=False, separators=(",", ":")
    )
    for char, escape in _JSON_ESCAPES.items():
        text = text.replace(char, escape)
    return text


def script_hash(script: str) -> str:
    """The CSP source expression that allows exactly this inline script."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"

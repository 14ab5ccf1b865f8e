"""Keeping configured secrets out of everything ProbeGuard writes.

A secret is a value the user configured for a call: a header value (literal or expanded from
``${NAME}``), an API key, a URL's user info or query values. A server may echo any of them
back (an error body quoting the request, a debug endpoint), so whatever text comes back is
passed through ``redact`` before it becomes a record, an error message, a log line, a cache
entry or a report. The one rule, used by the HTTP adapter and the OpenAI-compatible client:

- every piece of a secret is replaced by ``***``: the whole value and, for a value with
  spaces (``Bearer sk-...``), each word of it; each also in its URL-encoded, URL-decoded and
  JSON-escaped forms, since an echo may carry any of them;
- pieces shorter than ``MIN_SECRET_LEN`` characters are left alone: no key is that short, and
  replacing ``"1"`` or ``"en"`` everywhere would wreck the text;
- longer pieces are replaced first, so no suffix of a long secret survives a shorter one.

``redact_url`` is the display form of a URL: no user info, query values as ``***``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

__all__ = [
    "MIN_SECRET_LEN",
    "REDACTED",
    "redact",
    "redact_url",
    "replace_pieces",
    "secret_pieces",
    "url_secrets",
]

REDACTED = "***"
MIN_SECRET_LEN = 6


def secret_pieces(values: Iterable[str]) -> tuple[str, ...]:
    """Every form of every piece of ``values`` to replace, longest first (see the module
    docstring)."""
    pieces: set[str] = set()
    for value in values:
        for part in {value, *value.split()}:
            for form in (part, quote(part, safe=""), unquote(part), json.dumps(part)[1:-1]):
                if len(form) >= MIN_SECRET_LEN:
                    pieces.add(form)
    return tuple(sorted(pieces, key=lambda p: (-len(p), p)))


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every piece of every secret replaced by ``***`` (``secrets``: raw values,
    or the output of ``secret_pieces``)."""
    return replace_pieces(text, secret_pieces(secrets))


def replace_pieces(text: str, pieces: Iterable[str]) -> str:
    """``text`` with each of ``pieces`` replaced by ``***``, in order: ``redact`` once the
    pieces are worked out (``secret_pieces(secrets)``), for callers that keep them."""
    for piece in pieces:
        text = text.replace(piece, REDACTED)
    return text


def url_secrets(url: str) -> list[str]:
    """The parts of ``url`` that may be secrets: user name, password and query values."""
    parts = urlsplit(url)
    found = [p for p in (parts.username, parts.password) if p]
    found += [v for _, v in parse_qsl(parts.query, keep_blank_values=True) if v]
    return found


def redact_url(url: str) -> str:
    """``url`` without user info, and with query values replaced by ``***``."""
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port is not None:
        netloc += f":{parts.port}"
    query = urlencode(
        [(k, REDACTED) for k, _ in parse_qsl(parts.query, keep_blank_values=True)], safe="*"
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))

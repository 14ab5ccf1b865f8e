"""Control characters in untrusted text made visible: one sanitiser for every output.

Corpus text, questions, answers, endpoint responses and the ids they carry reach reports
(HTML, Markdown) and the terminal. A control character there acts instead of showing: ``ESC c``
resets a terminal, ``ESC ]`` sets its title or writes hyperlinks, ``BEL`` rings, ``NUL`` cuts
text short in C-string consumers, and C1 codes (U+0080–U+009F, e.g. ``CSI`` U+009B) are
escape sequences to some terminals. ``visible_controls`` replaces each one with a visible
escape, ``\\xHH`` (two lowercase hex digits), so the reader sees that it was there:

    C0 (U+0000–U+001F) except TAB and LF, DEL (U+007F) and C1 (U+0080–U+009F) → ``\\xHH``;
    CR LF → LF first (a Windows line end is not an attack); a lone CR is escaped (it lets
    later text overwrite a terminal line).

``one_line`` is the stricter rule for a one-line message quoting user input (a CLI error):
every character ``str.isprintable`` calls unprintable but the space — controls, format
characters, line and paragraph separators, LF and TAB too — becomes its Python escape
(``\\x1b``, ``\\n``, ``\\u2028``), so the message stays one inert line.

Rule and names of the ranges: ECMA-48 (5th ed., 1991), sections 5.2–5.3; ISO/IEC 6429.
"""

from __future__ import annotations

import re

__all__ = ["CONTROL_CHARS", "one_line", "visible_controls"]

CONTROL_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""The characters ``visible_controls`` escapes (TAB U+0009 and LF U+000A are kept)."""


def _escape(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def visible_controls(text: str) -> str:
    """``text`` with CR LF made LF and every other control character (C0 but TAB and LF,
    DEL, C1) written as a visible ``\\xHH`` escape; text without one is returned as is."""
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    return CONTROL_CHARS.sub(_escape, text)


def one_line(text: str) -> str:
    """``text`` with every character a terminal would act on (``str.isprintable`` false,
    the space aside) written as its Python escape (``\\x1b``, ``\\n``), so that a message
    quoting user input stays one inert line."""
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)

"""Control characters in untrusted text become visible escapes (core.sanitize)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from probeguard.core.sanitize import CONTROL_CHARS, one_line, visible_controls


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1bc", "\\x1bc"),  # ESC c: resets a terminal
        ("a\x00b", "a\\x00b"),  # NUL
        ("ding\x07", "ding\\x07"),  # BEL
        ("x\x7f", "x\\x7f"),  # DEL
        ("\x9b31m", "\\x9b31m"),  # C1 CSI
        ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),  # OSC: set the window title
        ("over\rwrite", "over\\x0dwrite"),  # a lone CR overwrites a terminal line
    ],
)
def test_controls_become_visible_escapes(raw, shown):
    assert visible_controls(raw) == shown


def test_tab_newline_and_windows_line_ends_are_kept_as_text():
    assert visible_controls("a\tb\nc\r\nd") == "a\tb\nc\nd"
    assert visible_controls("Straße — 30 days") == "Straße — 30 days"


@given(st.text())
def test_no_control_character_survives(text):
    out = visible_controls(text)
    assert not CONTROL_CHARS.search(out) and "\r" not in out


def test_one_line_escapes_everything_a_terminal_acts_on():
    assert one_line("doc\x1bc\nnext\u2028x\ty") == "doc\\x1bc\\nnext\\u2028x\\ty"
    assert one_line("plain text, ünïcode") == "plain text, ünïcode"


@given(st.text())
def test_one_line_is_one_printable_line(text):
    out = one_line(text)
    assert all(c.isprintable() or c == " " for c in out)

"""Control characters in untrusted text become visible escapes (core.sanitize)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from probeguard.core.sanitize import CONTROL_CHARS, visible_controls


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

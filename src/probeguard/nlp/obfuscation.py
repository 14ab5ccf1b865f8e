"""Disguised text: zero-width characters and homoglyphs, and ``fold``, which undoes them.

Used by the poisoning probe (to disguise payloads and to judge them) and by the pipeline's
instruction sanitiser (to read a payload as a reader would).
"""

from __future__ import annotations

import unicodedata

__all__ = ["HOMOGLYPHS", "ZERO_WIDTH", "fold"]

ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad")
"""Zero-width space / non-joiner / joiner, word joiner, BOM and soft hyphen."""

HOMOGLYPHS: dict[str, str] = {
    # Cyrillic
    "А": "A",
    "В": "B",
    "С": "C",
    "Е": "E",
    "Н": "H",
    "І": "I",
    "Ј": "J",
    "К": "K",
    "М": "M",
    "О": "O",
    "Р": "P",
    "Ѕ": "S",
    "Т": "T",
    "Х": "X",
    "Ү": "Y",
    "Ԍ": "G",
    "а": "a",
    "с": "c",
    "е": "e",
    "һ": "h",
    "і": "i",
    "ј": "j",
    "о": "o",
    "р": "p",
    "ѕ": "s",
    "х": "x",
    "у": "y",
    "ԁ": "d",
    "ԛ": "q",
    "ԝ": "w",
    # Greek
    "Α": "A",
    "Β": "B",
    "Ε": "E",
    "Ζ": "Z",
    "Η": "H",
    "Ι": "I",
    "Κ": "K",
    "Μ": "M",
    "Ν": "N",
    "Ο": "O",
    "Ρ": "P",
    "Τ": "T",
    "Υ": "Y",
    "Χ": "X",
    "ο": "o",
    "ν": "v",
}
"""Look-alike letters (Cyrillic, Greek) and the Latin letter each imitates."""

_FOLD = str.maketrans({**{z: None for z in ZERO_WIDTH}, **HOMOGLYPHS})


def fold(text: str) -> str:
    """``text`` as a reader sees it: NFKC-normalised (full-width and compatibility forms
    become plain ones), zero-width characters dropped, homoglyphs mapped to the Latin
    letters they imitate."""
    return unicodedata.normalize("NFKC", text).translate(_FOLD)

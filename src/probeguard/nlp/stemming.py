"""Light stemming, shared by the extractive generator, the offline judges, the fabrication
detector, the query expansion and the probes, so that plural and inflected variants of a word
meet ("release", "released", "releases", "releasing")."""

from __future__ import annotations

from functools import lru_cache

__all__ = ["stem"]

STEM_MEMO_SIZE = 1 << 16
"""How many words ``stem`` remembers (a vocabulary; least recently used forgotten first)."""


@lru_cache(maxsize=STEM_MEMO_SIZE)
def stem(word: str) -> str:
    """Light suffix normalisation so that plural and inflected variants meet.

    Harman's S-stemmer (Harman 1991, "How effective is suffixing?", JASIS 42(1)) for plurals
    ("-ies" → "-y", "-es"/"-s" dropped, but not "-ss"/"-us"/"-is"), then "-ing"/"-ed" dropped
    from longer words, then a final "-e" dropped, so "release", "released", "releases" and
    "releasing" all become "releas". A possessive "'s" is removed first. Numbers are kept.

    Memoised by word: every judge and metric stems the same words again and again.
    """
    w = word.lower()
    if w.endswith(("'s", "’s")):
        w = w[:-2]
    if not w or w[0].isdigit():
        return w
    if len(w) > 4 and w.endswith("ies") and not w.endswith(("aies", "eies")):
        w = w[:-3] + "y"
    elif len(w) > 3 and w.endswith("es") and not w.endswith(("aes", "ees", "oes")):
        w = w[:-1]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 4 and w.endswith("ed"):
        w = w[:-2]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w

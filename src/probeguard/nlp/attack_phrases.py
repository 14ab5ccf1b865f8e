"""Attack phrases: the instruction-like phrases that prompt-injection text uses and benign
security pages quote ("ignore (your) previous instructions", "system prompt", "reply only
with", "system note" / "system update", "you are now ...", "developer mode", "disregard ...
instructions", "reveal the ...").

``attack_phrases(text)`` lists the ones a text holds, lower-cased, in first-seen order. A
text holding one *quotes* attack-like text; whether it is an attack or benign content (a
security FAQ) is for its callers to decide: the benign-control probe and the pipeline's
instruction sanitiser. The probe records ``probeguard.detectors.fabrication.VERSION`` as its
detector version: bump it with any change to these patterns.
"""

from __future__ import annotations

import re

__all__ = ["ATTACK_PATTERNS", "attack_phrases"]

ATTACK_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\bignore (?:all |any )?(?:of )?(?:your |the |my )?(?:previous|prior|earlier|above) "
        r"(?:instructions|directions|rules|prompts?)\b",
        r"\bdisregard (?:all |any )?(?:of )?(?:your |the )?(?:previous |prior |above )?"
        r"(?:instructions|rules|guidelines)\b",
        r"\bsystem prompt\b",
        r"\breply only with\b",
        r"\brespond only with\b",
        r"\bsystem (?:note|update|override|message)\b",
        r"\byou are now (?:in |an? |the )?\w+",
        r"\bdeveloper mode\b",
        r"\breveal (?:the |your )?(?:system prompt|discount codes?|password|instructions|"
        r"customer list|secrets?)\b",
    )
)
"""Instruction-like phrases that attack text uses (and benign security pages quote)."""


def attack_phrases(text: str) -> list[str]:
    """The attack-like phrases in ``text`` (lower-cased, first-seen order, no repeats)."""
    found: list[tuple[int, str]] = []
    for pattern in ATTACK_PATTERNS:
        found += [(m.start(), m.group(0).lower()) for m in pattern.finditer(text)]
    out: list[str] = []
    for _, phrase in sorted(found):
        if phrase not in out:
            out.append(phrase)
    return out

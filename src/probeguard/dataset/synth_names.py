"""Names for the synthesizer: proper-noun answer spans, and the rule that says when two
names are confusable (the ``entity_collision`` attack).

**Proper tokens** (``name_vocabulary``): a capitalised word the corpus writes capitalised
inside a sentence (not only as its first word) and never in lower case: "Kestrel", "Tessaly",
"Renn" are proper; "Policy", "Lake", "Customer" are not (the corpus also says "policy",
"lake", "customer"), nor "Footwear" or "Households" when they only start sentences. Months
and weekdays are never names (they belong to dates).

**Name spans** (``name_spans``): a run of 1 to ``MAX_NAME_TOKENS`` capitalised words joined
by single spaces ("Halden Ridge Treatment Plant", "Tobias Renn"; not the tail of a longer
one: "Bridge" of "Seven-Arch Bridge", "New" of "New Year's Day"), a leading stopword ("The")
dropped, holding at least one proper token, not one word opening the sentence (its capital
may be the sentence's), not followed by a possessive "'s". A name found in more
than ``COMMON_SHARE`` of the documents, and in more than one (the corpus's own organisation,
its town) is *common*:
no question asks for it, the answer is a guess from the corpus's topic.

**The wh-phrase** (``name_wh``): "whom" after "by" ("designed by whom"); "which <word>" from
an ordinary (not proper) last or first word ("Carrow Dam" → "which dam", "Lake Tessaly" →
"which lake"); else "what".

**Confusable names** (``confusable``; both names of at least two content words, neither
inside the other, case-insensitive), when one of:

1. *same head, one modifier changed*: the same number of content words, the same last one
   (the head noun), and exactly one other position different ("Residential Water Rates" /
   "Commercial Water Rates"; "Refund Policy" / "Shipping Policy");
2. *shared proper first token*: the same first content word, and it is a proper token
   ("Kestrel Plus" / "Kestrel Pro"; not "Customer Data Retention Policy" / "Customer Support",
   whose shared "Customer" is an ordinary word);
3. *small edit distance*: Levenshtein distance of the whole lower-cased names at most
   ``MAX_EDITS`` and at most ``EDIT_SHARE`` of the longer name ("Halvik Glassworks" /
   "Halvic Glassworks").

Sharing an ordinary word is not enough ("Water Conservation Rebates" / "Residential Water
Rates" are not confusable): that was the rule before, and it paired documents no reader would
mix up.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from probeguard.core.documents import Document
from probeguard.nlp.mentions import MONTHS
from probeguard.nlp.text import STOPWORDS, words

__all__ = [
    "COMMON_SHARE",
    "EDIT_SHARE",
    "MAX_EDITS",
    "MAX_NAME_TOKENS",
    "NameVocabulary",
    "confusable",
    "edit_distance",
    "name_spans",
    "name_vocabulary",
    "name_wh",
]

MAX_NAME_TOKENS = 4
"""Longest name span, in words."""
MAX_EDITS = 2
"""Most character edits between two confusable names (rule 3)."""
EDIT_SHARE = 0.2
"""Most edits as a share of the longer name's length (rule 3)."""
COMMON_SHARE = 0.2
"""A name in more than this share of the documents is common (never an answer)."""

_CAPITALISED = re.compile(r"(?<![\w-])[A-Z][a-z]+(?: [A-Z][a-z]+)*\b(?![-'’]\w| [A-Z])")
_AFTER_NAME = re.compile(r"[A-Z][\w-]*\s$")
_WORD = re.compile(r"(?<![\w-])[A-Za-z]+\b")
_INSIDE = re.compile(r"[\w,;)\"]\s+$")
_BY = re.compile(r"\bby\s+(?:the\s+)?$", re.IGNORECASE)
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_NOT_NAMES = frozenset({*MONTHS, *_WEEKDAYS, *(f"{d}s" for d in _WEEKDAYS)})


@dataclass(frozen=True)
class NameVocabulary:
    """The corpus's proper tokens (lower-cased) and common names (module docstring)."""

    proper: frozenset[str] = frozenset()
    common: frozenset[str] = frozenset()

    def is_proper(self, token: str) -> bool:
        """``token`` is a proper token and no month or weekday."""
        return token not in _NOT_NAMES and token.lower() in self.proper


def _proper_tokens(texts: Sequence[str]) -> frozenset[str]:
    lower: set[str] = set()
    inside: set[str] = set()
    for text in texts:
        for match in _WORD.finditer(text):
            word = match.group(0)
            if word.islower():
                lower.add(word)
            elif _INSIDE.search(text[max(0, match.start() - 8) : match.start()]):
                inside.add(word.lower())
    return frozenset(inside - lower)


def name_vocabulary(documents: Sequence[Document]) -> NameVocabulary:
    """The proper tokens and common names of ``documents`` (titles and texts)."""
    proper = _proper_tokens([t for d in documents for t in (d.title, d.text)])
    vocab = NameVocabulary(proper=proper)
    seen = Counter(
        name for d in documents for name in {d.text[a:b] for a, b in name_spans(d.text, vocab)}
    )
    limit = max(1.0, COMMON_SHARE * len(documents))
    return NameVocabulary(proper=proper, common=frozenset(n for n, k in seen.items() if k > limit))


def name_spans(sentence: str, vocab: NameVocabulary) -> list[tuple[int, int]]:
    """(start, end) of each name in ``sentence`` (rules in the module docstring)."""
    out = []
    for match in _CAPITALISED.finditer(sentence):
        if _AFTER_NAME.search(sentence[max(0, match.start() - 40) : match.start()]):
            continue  # the tail of a longer name ("Seven-Arch Bridge")
        start, tokens = match.start(), match.group(0).split(" ")
        while tokens and tokens[0].lower() in STOPWORDS:
            start += len(tokens.pop(0)) + 1
        if not 1 <= len(tokens) <= MAX_NAME_TOKENS or (len(tokens) == 1 and start == 0):
            continue
        if any(t in _NOT_NAMES for t in tokens) or not any(vocab.is_proper(t) for t in tokens):
            continue
        out.append((start, match.end()))
    return out


def name_wh(name: str, head: str, vocab: NameVocabulary) -> str:
    """The wh-phrase for ``name`` after the text ``head`` (module docstring)."""
    if _BY.search(head):
        return "whom"
    tokens = name.split()
    for token in (tokens[-1], tokens[0]):
        if len(tokens) > 1 and not vocab.is_proper(token) and token.lower() not in STOPWORDS:
            return f"which {token.lower()}"
    return "what"


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions; Levenshtein 1966), by
    the usual two-row dynamic programme."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def _content(name: str) -> list[str]:
    """The lower-cased words of ``name`` that are not stopwords."""
    return [w for w in (t.lower() for t in words(name)) if w not in STOPWORDS]


def _one_modifier(x: list[str], y: list[str]) -> bool:
    return len(x) == len(y) and x[-1] == y[-1] and sum(p != q for p, q in zip(x, y)) == 1


def confusable(a: str, b: str, vocab: NameVocabulary) -> bool:
    """Whether names ``a`` and ``b`` are confusable (rules 1-3 of the module docstring)."""
    x, y = _content(a), _content(b)
    la, lb = " ".join(x), " ".join(y)
    if len(x) < 2 or len(y) < 2 or la in lb or lb in la:
        return False
    if _one_modifier(x, y):
        return True
    if x[0] == y[0] and x[0] in vocab.proper:
        return True
    edits = edit_distance(la, lb)
    return edits <= MAX_EDITS and edits <= EDIT_SHARE * max(len(la), len(lb))

"""The ``negation`` mutation: the claim's polarity flipped by negating, or un-negating, the
auxiliary or copula that governs it (conventions in ``probeguard.probes.mutation_base``).

The governing auxiliary or copula is the last one before ``within``, else the first one
outside a subordinate clause (the first verb after "that", "which", "once", "if", ...
belongs to the subordinate clause). It is negated: "are" → "are not", "can" → "cannot",
"has" (as a main verb) → "does not have"; an existing negation is removed instead ("are
not" → "are", "cannot" → "can", "isn't" → "is", "never" dropped). No auxiliary or copula:
not applicable (lexical verbs need a POS tagger).
"""

from __future__ import annotations

import re

import numpy as np

from probeguard.probes.mutation_base import Mutation, Span, span_mutation

__all__ = ["mutate_negation"]

_AUX = frozenset(
    {
        "is",
        "are",
        "was",
        "were",
        "am",
        "can",
        "could",
        "will",
        "would",
        "may",
        "might",
        "must",
        "should",
        "shall",
        "does",
        "do",
        "did",
        "has",
        "have",
        "had",
    }
)
_NEGATED = {
    "isn't": "is",
    "aren't": "are",
    "wasn't": "was",
    "weren't": "were",
    "can't": "can",
    "cannot": "can",
    "couldn't": "could",
    "won't": "will",
    "wouldn't": "would",
    "mightn't": "might",
    "mustn't": "must",
    "shouldn't": "should",
    "doesn't": "does",
    "don't": "do",
    "didn't": "did",
    "hasn't": "has",
    "haven't": "have",
    "hadn't": "had",
}
_DO_SUPPORT = {"has": "does not have", "have": "do not have", "had": "did not have"}
_PARTICIPLES = frozenset(
    {
        "been",
        "got",
        "made",
        "had",
        "done",
        "gone",
        "paid",
        "sent",
        "won",
        "brought",
        "bought",
        "kept",
        "left",
        "lost",
        "held",
        "told",
        "found",
        "built",
        "run",
        "begun",
        "become",
        "come",
        "put",
        "set",
        "cut",
        "read",
        "spent",
        "taken",
        "given",
    }
)
_SUBORDINATORS = frozenset(
    {
        "who",
        "which",
        "that",
        "if",
        "when",
        "once",
        "after",
        "before",
        "because",
        "although",
        "though",
        "while",
        "unless",
        "since",
        "until",
        "whether",
        "where",
        "whom",
        "whose",
    }
)
_TOKEN = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?")


def _match_case(template: str, word: str) -> str:
    return word[:1].upper() + word[1:] if template[:1].isupper() else word


def mutate_negation(
    text: str,
    rng: np.random.Generator | None = None,
    *,
    within: Span | None = None,
    context: str | None = None,
) -> Mutation | None:
    """Negate (or un-negate) the governing auxiliary / copula (rules in the module docstring).
    Deterministic: ``rng`` and ``context`` are accepted for a uniform signature only."""
    tokens = [(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text)]
    # Candidates are token indices; one that belongs to a subordinate clause (the first verb
    # group after "that", "which", "once", "if", ...) is stored as ``-i - 1``.
    candidates: list[int] = []
    subordinate = False
    for i, (tok, _, _) in enumerate(tokens):
        low = tok.lower().replace("’", "'")
        if low in _SUBORDINATORS:
            subordinate = True
            continue
        if low in _AUX or low in _NEGATED:
            candidates.append(i if not subordinate else -i - 1)
            subordinate = False  # the subordinate clause has had its verb
    if not candidates:
        return None
    chosen: int | None = None
    if within is not None:
        before = [
            c if c >= 0 else -c - 1
            for c in candidates
            if tokens[c if c >= 0 else -c - 1][2] <= within[0]
        ]
        if before:
            chosen = before[-1]
    if chosen is None:
        main = [c for c in candidates if c >= 0]
        chosen = main[0] if main else -candidates[0] - 1
    tok, s, e = tokens[chosen]
    low = tok.lower().replace("’", "'")
    if low in _NEGATED:
        return span_mutation("negation", text, s, e, _match_case(tok, _NEGATED[low]))
    nxt = tokens[chosen + 1] if chosen + 1 < len(tokens) else None
    if nxt is not None and nxt[0].lower() in {"not", "never"}:
        return span_mutation("negation", text, s, nxt[2], tok)
    if low == "can":
        return span_mutation("negation", text, s, e, _match_case(tok, "cannot"))
    if low in _DO_SUPPORT:
        nxt_low = nxt[0].lower() if nxt is not None else ""
        if not (nxt_low in _PARTICIPLES or nxt_low.endswith(("ed", "en"))):
            return span_mutation("negation", text, s, e, _match_case(tok, _DO_SUPPORT[low]))
    return span_mutation("negation", text, s, e, f"{tok} not")

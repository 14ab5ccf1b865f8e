"""Polarity per predicate for the offline judge: the predicates of a text, each word's
negation parity within its clause, and whether a sentence agrees with a claim."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from probeguard.detectors.claims import VERBISH, clause_spans
from probeguard.nlp.mentions import (
    is_negation,
    negation_cues,
)
from probeguard.nlp.stemming import stem
from probeguard.nlp.text import STOPWORDS

AUX = frozenset(
    """is are was were be been being am 's 're has have had do does did can could may might
must shall should will would isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't
didn't cannot can't couldn't won't wouldn't shouldn't mustn't mightn't""".split()
)
"""Auxiliaries and copulas: the predicate is the word they carry ("are not *refundable*")."""
VERB_GROUP = frozenset(
    """not no never also still always often only even yet longer ever quite very so now then
once later already long however""".split()
)
"""Words skipped between an auxiliary and the word it carries ("is no longer *used*"), with
any adverb in "-ly" ("are not usually *regulated*")."""
SCOPE_WORDS = frozenset(
    """that which who whom whose where when because although though unless if whereas while
but since whether until""".split()
)
"""Words that open a clause of their own: a negation before them does not reach past them."""
SCOPE_MARKS = re.compile(r"[,;:—–]")
TOKEN = re.compile(r"\w+(?:[.,'’-]\w+)*")


@dataclass(frozen=True)
class Polarity:
    predicates: dict[str, tuple[int, ...]]
    """Stem of each predicate (rules in the module docstring) -> its polarity at each of its
    occurrences as a predicate, in order."""
    at: dict[str, tuple[int, ...]]
    """Stem of every word -> its polarity at each of its occurrences, in order."""

    @property
    def negated(self) -> frozenset[str]:
        """The predicates negated somewhere ("are not *refundable*")."""
        return frozenset(k for k, v in self.predicates.items() if 1 in v)


def is_name(text: str) -> bool:
    """Every word capitalised (function words aside): a name or title, not a clause."""
    ws = re.findall(r"[^\W\d_][\w'’-]*", text)
    return bool(ws) and all(w[0].isupper() or w.lower() in STOPWORDS for w in ws)


def skipped(word: str) -> bool:
    return (
        word in AUX
        or word in VERB_GROUP
        or word in STOPWORDS
        or (len(word) > 4 and word.endswith("ly"))
    )


@lru_cache(maxsize=4096)
def read_polarity(text: str) -> Polarity:
    """The predicates of ``text`` and the polarity of each word (rules in the module
    docstring)."""
    toks = list(TOKEN.finditer(text))
    lower = [m.group(0).lower() for m in toks]
    stems = [stem(w) for w in lower]
    cues = {s for s, _ in negation_cues(text)}
    cuts = {s for s, _ in clause_spans(text)}
    parity: list[int] = []
    prev_end, n = 0, 0
    for m, w in zip(toks, lower):
        if m.start() in cuts or w in SCOPE_WORDS or SCOPE_MARKS.search(text, prev_end, m.start()):
            n = 0  # a new clause: earlier cues do not reach into it
        parity.append(n % 2)
        n += m.start() in cues
        prev_end = m.end()
    at: dict[str, list[int]] = {}
    for st, par in zip(stems, parity):
        at.setdefault(st, []).append(par)
    heads: set[int] = set()
    if not is_name(text):
        for i, w in enumerate(lower):
            if w in AUX:
                for j in range(i + 1, min(i + 5, len(lower))):
                    if not skipped(lower[j]):
                        heads.add(j)
                        break
            elif (w in VERBISH or (i > 0 and len(w) > 3 and w.endswith("ed"))) and not (
                is_negation(w) or w in STOPWORDS
            ):
                heads.add(i)
    predicates: dict[str, list[int]] = {}
    for i in sorted(heads):
        predicates.setdefault(stems[i], []).append(parity[i])
    return Polarity(
        {k: tuple(v) for k, v in predicates.items()}, {k: tuple(v) for k, v in at.items()}
    )


def polarity_agrees(claim: Polarity, sentence: str) -> bool | None:
    """Whether ``sentence`` gives the claim's predicates the claim's polarity: False when a
    predicate of either that both hold has the opposite polarity ("are *accepted*" vs "are
    not *accepted*"), True when they share a predicate and none is opposite, None when they
    share no predicate. A predicate of both is compared at its predicate occurrences
    (occurrence by occurrence when both hold it equally often); a predicate of one side only
    at every occurrence of the word on the other side (and of the sentence's word on both),
    opposite when no polarity is common. A claim without predicates (a noun phrase, a name,
    a number) has no polarity: None."""
    if not claim.predicates:
        return None
    other = read_polarity(sentence)
    shared = False
    for p in sorted(claim.predicates.keys() | other.predicates.keys()):
        if p in claim.predicates and p in other.predicates:
            mine, theirs = claim.predicates[p], other.predicates[p]
        else:
            mine = claim.predicates.get(p) or claim.at.get(p, ())
            theirs = other.at.get(p, ())
        if mine and theirs:
            if len(mine) == len(theirs) and p in claim.predicates and p in other.predicates:
                if mine != theirs:
                    return False
            elif not set(mine) & set(theirs):
                return False
            shared = True
    return True if shared else None


def may_support(claim: Polarity, text: str, sentences: list[str]) -> bool:
    """Polarity lets ``sentences`` (a sentence and, when it opens with a pronoun, the one
    before it) support the claim: a negated predicate of the claim is held by one of them
    (a negation is stated with its predicate: "Tesla was not renowned" is not supported by
    "He lived in hotels"); and a claim whose predicate the word list misses holds no
    predicate of theirs with the opposite polarity ("The company manufactures boots" vs
    "The company does not manufacture boots": unsupported, not contradicted)."""
    if not all(any(p in read_polarity(t).at for t in sentences) for p in claim.negated):
        return False
    if claim.predicates or is_name(text):
        return True
    # the claim's words after a first content word (its subject): a bare noun phrase or a
    # single word ("monophyletic") has no predicate to read
    ws = [w.lower() for w in TOKEN.findall(text)]
    first = next((i for i, w in enumerate(ws) if w not in STOPWORDS), len(ws))
    later = {stem(w) for w in ws[first + 1 :]}
    for t in sentences:
        for p, theirs in read_polarity(t).predicates.items():
            mine = claim.at.get(p)
            if p in later and mine and not set(mine) & set(theirs):
                return False
    return True

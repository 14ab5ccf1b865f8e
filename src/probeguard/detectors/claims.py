"""Atomic claim decomposition: an answer split into short, self-contained claims, each kept
with its character offsets in the answer (rule based, no model).

Rules, applied in order (Min et al. 2023, FActScore, and Ru et al. 2024, RAGChecker, split
answers into atomic facts with an LLM; this is the offline approximation):

1. **Sentences** — ``probeguard.nlp.text.sentence_spans`` (syntok: abbreviations stay whole),
   also cut after a ``[n]`` marker followed by a capital letter (a chunk quoted up to its
   cut-off end, then the next quote).
2. **Clauses** — a sentence is cut at ``;`` and at ``, and`` / `` and`` / ``, but`` /
   `` but`` / ``, while`` / ``, whereas`` when *both* sides carry verb-ish content — a word
   from a closed list of auxiliaries, modals and common verbs ("is", "has", "can", "costs",
   "takes", "offers", ...) or a word ending in "-ed" — the right side within its first four
   words and with no comma before that word (at ``;`` the right side needs none). So "We ship to Canada and Mexico." stays
   one claim (its right side, "Mexico.", has no verb), while "Returns take 30 days and refunds
   take 5 days." becomes two. A right side that *opens* with a verb ("... costs $12 and
   includes free shipping") borrows the left side's subject — the words before the left
   side's first verb-ish word — so it stands alone: "The plan includes free shipping".
3. **Pronouns** — a claim that opens with "it", "they", "he", "she", "this", "these",
   "those" directly followed by a verb-ish word ("This fee applies" keeps its determiner),
   or with "its"/"their", takes the previous claim's subject instead, when that subject
   is one to six words and opens with no pronoun itself ("It costs $12." after "Kestrel
   Plus is a plan." → "Kestrel Plus costs $12."; "its" becomes "Kestrel Plus's").
4. **Citations** — ``[n]`` / ``[n, m]`` markers are removed from the claim text and kept, as
   1-based passage numbers, in ``citations``.
5. **Bare claims** — a claim with no verb-ish word ("1774.", "Denver Broncos.", "Reducing
   poverty.") is a short answer, not a statement: what it is about lives in its question
   (``is_bare``; the judges anchor it with the question's words).
6. **Hedges** — a claim that is a refusal or a disclaimer (``looks_like_refusal``, or "I'm not
   sure", "as an AI", "please consult", "may not be accurate", "I cannot", ...) is kept but
   flagged ``hedge=True``: it claims nothing about the world, so faithfulness leaves it out
   and answer relevancy counts it against the answer.
7. **Unverifiable claims** — a claim that is a question ("Do you play guitar?"), an
   exclamation ("Cheerleaders are awesome!") or told in the first person singular ("I loved
   listening to it", "my favourite") conveys the speaker's asking, feeling or experience,
   which no document can attest (``is_unverifiable``). It is kept (it is part of what the
   answer says, and a question can carry a statement: "Google Chrome is a freeware browser,
   did you know?"); the offline judge's graded support counts it (``detectors.grading``).
   Attribution asks that *all* the information a response conveys be attributable to its
   source (Rashkin et al. 2021, "Measuring Attribution in Natural Language Generation
   Models", AIS); personal opinion and experience are not (Dziri et al. 2022, BEGIN).

``start``/``end`` are the span of the claim's source text in the answer (before rewriting);
``answer[start:end]`` is that text, citation markers included.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from probeguard.models.prompts import looks_like_refusal
from probeguard.nlp.text import (
    CITATION_MARKER,
    SENTENCE_MEMO_MAX_CHARS,
    sentence_spans,
    word_spans,
    words,
)

__all__ = [
    "AtomicClaim",
    "clause_spans",
    "decompose",
    "factual",
    "is_bare",
    "is_hedge",
    "is_unverifiable",
    "subject_of",
    "VERBISH",
]

VERBISH = frozenset(
    """
is are was were be been being am isn't aren't wasn't weren't 's 're
has have had hasn't haven't hadn't
do does did doesn't don't didn't
can could may might must shall should will would cannot can't won't wouldn't shouldn't
cost costs take takes took offer offers include includes require requires cover covers
get gets got receive receives charge charges ship ships pay pays need needs allow allows
apply applies start starts end ends last lasts run runs give gives provide provides
contain contains make makes made mean means become becomes became remain remains stay stays
keep keeps hold holds lead leads leads open opens close closes serve serves support supports
reach reaches answer answers accept accepts issue issues return returns refund refunds
expire expires renew renews begin begins began go goes went come comes came see sees saw
say says said show shows know knows use uses work works live lives lies lie stands stand
replace replaces add adds sell sells send sends buy buys own owns write writes wrote
deliver delivers leave leaves left grow grows grew flow flows build builds built find finds
found sit sits lay lays set sets carry carries become known born died
""".split()
)
"""Words that make a clause verb-ish (besides any word ending in "-ed")."""

_VERB_WINDOW = 4
_PRONOUN_SUBJECTS = frozenset({"it", "they", "he", "she", "this", "these", "those"})
_POSSESSIVES = frozenset({"its", "their", "his", "her"})
_CUT = re.compile(r";\s*|,?\s+(?:and|but|while|whereas)\s+", re.IGNORECASE)
_HEDGE = re.compile(
    r"\b(i(?:'m| am) not (?:sure|certain)|as an ai|i (?:cannot|can't|can not) "
    r"(?:provide|help|answer|say|confirm|verify)|please (?:consult|contact|check|refer)"
    r"|may not be (?:accurate|correct|up to date)|i (?:don't|do not) have (?:access|information)"
    r"|i(?:'m| am) (?:sorry|unable)|(?:consult|contact) (?:a|an|your) (?:professional|expert|"
    r"lawyer|doctor|advisor))\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class AtomicClaim:
    """One self-contained claim of an answer."""

    text: str
    """The claim as judged: citation markers removed, pronoun or subject filled in."""
    start: int
    """Start of the claim's source text in the answer."""
    end: int
    """End of the claim's source text in the answer."""
    sentence: int
    """Index of the answer sentence it came from."""
    citations: tuple[int, ...] = ()
    """1-based passage numbers cited by ``[n]`` markers in the source text."""
    resolved: str | None = None
    """The subject put in place of a leading pronoun (or borrowed by a verb-first clause)."""
    hedge: bool = False
    """A refusal or disclaimer rather than a claim about the world."""


def is_hedge(text: str) -> bool:
    """True for a refusal or disclaimer sentence (see rule 6 in the module docstring)."""
    return looks_like_refusal(text) or bool(_HEDGE.search(text))


FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "i'm", "i've", "i'd", "i'll"})
"""First-person singular words (rule 7); ``words`` tokens, so "I'm" is one."""


def is_unverifiable(text: str) -> bool:
    """True for a claim that no document can attest (rule 7): it ends with "?" or "!" (a
    question or an exclamation), or holds a first-person singular word (``FIRST_PERSON``)
    that is not part of a name. A capitalised one written next to another capitalised word
    (only spaces between) is read as part of a name: "Elizabeth I", "World War I", "My
    Chemical Romance"."""
    if text.rstrip(" \"')").endswith(("?", "!")):
        return True
    spans = word_spans(text)
    return any(
        token.lower() in FIRST_PERSON and not _in_name(text, spans, k)
        for k, (token, _, _) in enumerate(spans)
    )


def _in_name(text: str, spans: Sequence[tuple[str, int, int]], k: int) -> bool:
    """Whether the capitalised token ``k`` has a capitalised neighbour with only spaces
    between them (a name, as in ``is_unverifiable``)."""
    token, start, end = spans[k]
    if not token[:1].isupper():
        return False
    before = k > 0 and spans[k - 1][0][:1].isupper() and not text[spans[k - 1][2] : start].strip()
    after = (
        k + 1 < len(spans)
        and spans[k + 1][0][:1].isupper()
        and not text[end : spans[k + 1][1]].strip()
    )
    return before or after


def is_bare(text: str) -> bool:
    """True for a claim without a verb-ish word (rule 5): a short answer ("1774", "Denver
    Broncos", "reducing poverty") that only means something with its question."""
    return not _verbish(text)


def _verbish(text: str) -> bool:
    """Holds a verb-ish word: one from ``VERBISH``, or a word ending in "-ed" that does not
    open the text ("Opened electronics ..." opens with an adjective)."""
    ws = words(text)
    return any(
        w in VERBISH or (i > 0 and len(w) > 3 and w.endswith("ed")) for i, w in enumerate(ws)
    )


def _comma_before_verb(text: str) -> bool:
    """A comma between the start and the first verb-ish word: the subject began before the
    conjunction ("GPS units and satellite messengers, are subject to ...")."""
    for m in re.finditer(r"\S+", text):
        w = words(m.group(0))
        if w and w[0] in VERBISH:
            return "," in text[: m.start()]
    return False


def subject_of(text: str) -> str | None:
    """The words before the first verb-ish word of ``text`` (its subject), or None when the
    text opens with a verb-ish word or holds none."""
    for m in re.finditer(r"\S+", text):
        w = words(m.group(0))
        if w and (w[0] in VERBISH or (len(w[0]) > 3 and w[0].endswith("ed"))):
            subject = text[: m.start()].strip(" ,")
            return subject or None
    return None


def clause_spans(sentence: str) -> list[tuple[int, int]]:
    """Spans of the clauses of ``sentence`` (rule 2): cut where the left side is verb-ish
    and the right side has a verb-ish word among its first ``_VERB_WINDOW`` words (so that
    "engineer and clockmaker, known for a barometer that was carried ..." stays whole)."""
    spans = [(0, len(sentence))]
    for m in _CUT.finditer(sentence):
        start, _ = spans[-1]
        left = sentence[start : m.start()]
        nxt = _CUT.search(sentence, m.end())
        right_part = sentence[m.end() :] if nxt is None else sentence[m.end() : nxt.start()]
        head = " ".join(right_part.split()[:_VERB_WINDOW])
        if _verbish(left) and (
            m.group(0).strip() == ";" or (_verbish(head) and not _comma_before_verb(right_part))
        ):
            spans[-1] = (start, m.start())
            spans.append((m.end(), len(sentence)))
    return spans


def _tidy(text: str) -> str:
    text = " ".join(CITATION_MARKER.sub("", text).split()).strip(" ,;")
    if text and text[-1] not in ".!?":
        text += "."
    return text[:1].upper() + text[1:] if text else text


def _cited(text: str) -> tuple[int, ...]:
    return tuple(
        int(n) for m in CITATION_MARKER.finditer(text) for n in re.findall(r"\d+", m.group(0))
    )


def _resolve(text: str, previous: str | None) -> tuple[str, str | None]:
    """Rule 3: a leading pronoun replaced by the previous claim's subject."""
    m = re.match(r"\s*(\w+)\b", text)
    if m is None or previous is None:
        return text, None
    first = m.group(1).lower()
    if first not in _PRONOUN_SUBJECTS and first not in _POSSESSIVES:
        return text, None
    if first in _PRONOUN_SUBJECTS:  # "This fee applies" is a determiner, not a pronoun
        after = words(text[m.end() :])
        if not after or not (after[0] in VERBISH or after[0].endswith("ed")):
            return text, None
    subject = subject_of(previous)
    if subject is None:
        return text, None
    sw = words(subject)
    if not 1 <= len(sw) <= 6 or sw[0] in _PRONOUN_SUBJECTS | _POSSESSIVES:
        return text, None
    subject = subject[:1].upper() + subject[1:]
    replacement = subject + "'s" if first in _POSSESSIVES else subject
    return replacement + text[m.end() :], subject


_CITED_END = re.compile(r"\[\d{1,3}(?:\s*,\s*\d{1,3})*\](?=\s+[A-Z])")


def _sentences(answer: str) -> list[tuple[int, int]]:
    """Sentence spans, also cut after a citation marker followed by a capital letter (a
    quoted chunk that ends mid-sentence: "... abbots of Os [1] Marrowby is ...")."""
    out: list[tuple[int, int]] = []
    start = 0
    cuts = [m.end() for m in _CITED_END.finditer(answer)] + [len(answer)]
    for end in cuts:
        out.extend((start + s, start + e) for s, e in sentence_spans(answer[start:end]))
        start = end
    return out


def decompose(answer: str) -> list[AtomicClaim]:
    """The answer's atomic claims, in order (rules in the module docstring). Memoised by
    answer (a reference is often the answer again); each call returns a new list."""
    if len(answer) > SENTENCE_MEMO_MAX_CHARS:
        return list(_decompose.__wrapped__(answer))
    return list(_decompose(answer))


@lru_cache(maxsize=4096)
def _decompose(answer: str) -> tuple[AtomicClaim, ...]:
    out: list[AtomicClaim] = []
    previous: str | None = None
    for si, (s, e) in enumerate(_sentences(answer)):
        sentence = answer[s:e]
        left_subject: str | None = None
        for ci, (cs, ce) in enumerate(clause_spans(sentence)):
            source = sentence[cs:ce]
            text = _tidy(source)
            if not words(text):
                continue
            resolved: str | None = None
            if ci > 0 and left_subject and subject_of(text) is None and _verbish(text):
                text, resolved = f"{left_subject} {text[:1].lower()}{text[1:]}", left_subject
            else:
                text, resolved = _resolve(text, previous)
            if ci == 0:
                left_subject = subject_of(text)
            hedge = is_hedge(text)
            out.append(
                AtomicClaim(
                    text=text,
                    start=s + cs,
                    end=s + ce,
                    sentence=si,
                    citations=_cited(source),
                    resolved=resolved,
                    hedge=hedge,
                )
            )
            if not hedge:
                previous = text
    return tuple(out)


def factual(claims: Sequence[AtomicClaim]) -> list[AtomicClaim]:
    """The claims that are not hedges (what faithfulness scores)."""
    return [c for c in claims if not c.hedge]

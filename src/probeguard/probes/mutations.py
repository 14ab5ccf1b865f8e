"""Text mutations: a contradicting version of an evidence sentence or document, with exactly
one fact changed. Pure functions; every choice comes from the ``numpy.random.Generator``
passed in (the corpus-contradiction probe passes ``ctx.rng(question id, kind)``), so the
same inputs give the same mutation. Each returns ``None`` when it does not apply, and never
returns the text unchanged.

``within=(start, end)`` restricts the change to targets overlapping that span of ``text``
(the probe passes the span of the gold answer); ``context`` is the whole gold document, whose
values the new value must avoid (so that the contradicting value is new to the document, and
an answer quoting it can only have taken it from the injected text).

Kinds:

* ``number`` — a count, amount, price or percentage (not a date or an identifier such as a
  phone number): ``new = old × f`` with ``f`` drawn (without replacement) from
  ``(1.5, 2, 0.5, 3, 1.25, 0.75)``, rounded half up to the old number of decimals, and
  accepted when positive, different from ``old``, absent from ``context`` and, for a
  percentage, at most 100; failing every factor, ``old + k`` for the smallest ``k ≥ 1`` that
  passes. The format is kept: currency sign, decimals, thousands separators, percent sign,
  and words for a number written as a word ("thirty" → "forty-five"). ``30 → 45``,
  ``$12 → $18``. A clock hour ("9 a.m.") gets another hour 1–12 drawn uniformly.
* ``date`` — a date with a month gets another month (drawn uniformly among the months that
  have the date's day and give a date absent from ``context``), written in the same style
  ("1 March 2024" → "1 June 2024", "2024-03-01" → "2024-06-01"); a bare year is shifted by
  ``±d``, ``d`` drawn from 1–12 (1889 → 1893), to a year absent from ``context``.
* ``negation`` — the auxiliary or copula that governs the claim (the last one before
  ``within``, else the first one outside a subordinate clause — the first verb after "that",
  "which", "once", "if", ... belongs to the subordinate clause) is negated: "are"
  → "are not", "can" → "cannot", "has" (as a main verb) → "does not have"; an existing
  negation is removed instead ("are not" → "are", "cannot" → "can", "isn't" → "is", "never"
  dropped). No auxiliary or copula: not applicable (lexical verbs need a POS tagger).
* ``entity`` — a capitalised name overlapping ``within`` (see ``find_names``) is swapped for
  a name found in *other* documents (``corpus_names``), excluding names that contain or are
  contained in it and names present in ``context``; drawn uniformly within the first
  non-empty tier of "same rough kind" (see ``mutate_entity``).
* ``near_duplicate`` — the whole document copied with one of the above applied to the
  answer-bearing sentence (the kind drawn uniformly among those that apply).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from probeguard.nlp.mentions import (
    MONTHS,
    NumberMention,
    date_mentions,
    number_mentions,
    number_word,
)
from probeguard.nlp.text import STOPWORDS, normalize_answer

__all__ = [
    "CHANGE_KINDS",
    "KINDS",
    "Mutation",
    "NameInfo",
    "NameVocab",
    "corpus_names",
    "find_names",
    "mutate",
    "mutate_date",
    "mutate_entity",
    "mutate_negation",
    "mutate_number",
    "near_duplicate",
]

CHANGE_KINDS = ("number", "date", "negation", "entity")
"""Single-fact changes."""
KINDS = (*CHANGE_KINDS, "near_duplicate")
"""Every mutation kind, in the probe's default order."""

Span = tuple[int, int]


@dataclass(frozen=True)
class Mutation:
    """A mutated text and what changed in it.

    ``kind`` is the mutation (``near_duplicate`` included); ``change`` the single-fact change
    it made (equal to ``kind`` except for a near-duplicate). ``old`` was at
    ``source[start:end]``; ``new`` is at ``text[new_start:new_end]``.
    """

    kind: str
    change: str
    text: str
    old: str
    new: str
    start: int
    end: int
    new_start: int
    new_end: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _replace(kind: str, source: str, start: int, end: int, new: str) -> Mutation:
    text = source[:start] + new + source[end:]
    return Mutation(
        kind=kind,
        change=kind,
        text=text,
        old=source[start:end],
        new=new,
        start=start,
        end=end,
        new_start=start,
        new_end=start + len(new),
    )


def _overlaps(s: int, e: int, within: Span | None) -> bool:
    return within is None or (s < within[1] and within[0] < e)


def _pick(rng: np.random.Generator, items: Sequence[Any]) -> Any:
    return items[int(rng.integers(len(items)))]


# -- number -------------------------------------------------------------------------------
_FACTORS = (1.5, 2.0, 0.5, 3.0, 1.25, 0.75)
_CLOCK = re.compile(r"\s?(?:a\.m\.|p\.m\.|am\b|pm\b)", re.IGNORECASE)


def _round_half_up(x: float, decimals: int) -> float:
    scale = 10**decimals
    return math.floor(x * scale + 0.5 + 1e-9) / scale


def _format_number(value: float, decimals: int, grouped: bool) -> str:
    return f"{value:,.{decimals}f}" if grouped else f"{value:.{decimals}f}"


def mutate_number(
    text: str, rng: np.random.Generator, *, within: Span | None = None, context: str | None = None
) -> Mutation | None:
    """Change one number (rules in the module docstring)."""
    targets = [n for n in number_mentions(text) if _overlaps(n.start, n.end, within)]
    if not targets:
        return None
    target = _pick(rng, targets)
    avoid = {n.value for n in number_mentions(context if context is not None else text)}
    avoid |= {target.value}

    def ok(v: float) -> bool:
        if v <= 0 or any(math.isclose(v, a, abs_tol=1e-9) for a in avoid):
            return False
        return not (target.kind == "percent" and v > 100)

    new_value: float | None = None
    if _CLOCK.match(text, target.end) and target.decimals == 0 and 1 <= target.value <= 12:
        hours = [float(h) for h in range(1, 13) if ok(float(h))]
        return _number_mutation(text, target, str(int(_pick(rng, hours)))) if hours else None
    for i in rng.permutation(len(_FACTORS)):
        candidate = _round_half_up(target.value * _FACTORS[int(i)], target.decimals)
        if ok(candidate):
            new_value = candidate
            break
    if new_value is None:
        new_value = next((target.value + k for k in range(1, 1000) if ok(target.value + k)), None)
    if new_value is None:
        return None
    word = number_word(new_value) if target.word else None
    if word is not None:
        old_word = text[target.num_start : target.num_end]
        digits = word.capitalize() if old_word[:1].isupper() else word
    else:
        digits = _format_number(new_value, target.decimals, target.grouped)
    return _number_mutation(text, target, digits)


def _number_mutation(text: str, target: NumberMention, digits: str) -> Mutation:
    """The whole mention is the changed value ("$12" → "$18", "10%" → "15%")."""
    new = text[target.start : target.num_start] + digits + text[target.num_end : target.end]
    return _replace("number", text, target.start, target.end, new)


# -- date ---------------------------------------------------------------------------------
_DAYS_IN = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def mutate_date(
    text: str, rng: np.random.Generator, *, within: Span | None = None, context: str | None = None
) -> Mutation | None:
    """Shift one date or year (rules in the module docstring)."""
    targets = [d for d in date_mentions(text) if _overlaps(d.start, d.end, within)]
    if not targets:
        return None
    target = _pick(rng, targets)
    # Dates already present are parsed generously (any bare year counts): avoid them all.
    known = date_mentions(context if context is not None else text, any_year=True)
    present = {(d.year, d.month, d.day) for d in known}
    if target.month is not None and target.month_span is not None:
        day = target.day or 1
        months = [
            m
            for m in range(1, 13)
            if m != target.month
            and day <= _DAYS_IN[m - 1]
            and (target.year, m, target.day) not in present
        ]
        if not months:
            return None
        month = _pick(rng, months)
        s, e = target.month_span
        old = text[s:e]
        if target.format == "iso":
            new = f"{month:02d}"
        else:  # the same style: a full name, or a three-letter abbreviation
            new = MONTHS[month - 1] if old in MONTHS else MONTHS[month - 1][:3]
        return _replace("date", text, s, e, new)
    if target.year is None or target.year_span is None:
        return None
    years = {d.year for d in known}
    deltas = [d for d in range(-12, 13) if d != 0]
    for i in rng.permutation(len(deltas)):
        year = target.year + deltas[int(i)]
        if 1000 <= year <= 2099 and year not in years:
            s, e = target.year_span
            return _replace("date", text, s, e, str(year))
    return None


# -- negation -----------------------------------------------------------------------------
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
        return _replace("negation", text, s, e, _match_case(tok, _NEGATED[low]))
    nxt = tokens[chosen + 1] if chosen + 1 < len(tokens) else None
    if nxt is not None and nxt[0].lower() in {"not", "never"}:
        return _replace("negation", text, s, nxt[2], tok)
    if low == "can":
        return _replace("negation", text, s, e, _match_case(tok, "cannot"))
    if low in _DO_SUPPORT:
        nxt_low = nxt[0].lower() if nxt is not None else ""
        if not (nxt_low in _PARTICIPLES or nxt_low.endswith(("ed", "en"))):
            return _replace("negation", text, s, e, _match_case(tok, _DO_SUPPORT[low]))
    return _replace("negation", text, s, e, f"{tok} not")


# -- entity -------------------------------------------------------------------------------
_NAME = re.compile(
    r"(?<![\w@.])[A-Z][\w’'-]*(?:\s+(?:&\s+|of\s+(?:the\s+)?|de\s+|van\s+|von\s+)?[A-Z][\w’'-]*)*"
)
_CAP_WORD = re.compile(r"(?<![\w@.’'-])[A-Z][\w’'-]*")
_LOWER_WORD = re.compile(r"(?<![\w@.’'-])[a-z][a-z’'-]*(?![\w@])")
_NOT_NAMES = frozenset(MONTHS) | frozenset(
    {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
)
_OPENS = re.compile(r"(?:^|[.!?:;\n\"“(]\s*|\n\s*[-*•]\s*)$")
_ARTICLES = frozenset({"the", "a", "an"})


def _opens_sentence(text: str, start: int) -> bool:
    return start == 0 or bool(_OPENS.search(text[max(0, start - 4) : start]))


@dataclass(frozen=True)
class NameVocab:
    """What tells a name from a capitalised common word: ``capitals``, the capitalised words
    seen somewhere other than at the opening of a sentence ("Kestrel", not "Customers"), and
    ``lower``, the words seen in lower case ("once", "customers")."""

    capitals: frozenset[str]
    lower: frozenset[str]

    @classmethod
    def of(cls, texts: Iterable[str]) -> NameVocab:
        capitals: set[str] = set()
        lower: set[str] = set()
        for text in texts:
            for m in _CAP_WORD.finditer(text):
                if not _opens_sentence(text, m.start()):
                    capitals.add(re.sub(r"['’]s$", "", m.group(0)))
            lower.update(_LOWER_WORD.findall(text))
        return cls(frozenset(capitals), frozenset(lower))


def find_names(text: str, vocab: NameVocab | None = None) -> list[tuple[int, int, str]]:
    """Capitalised names in ``text`` as ``(start, end, name)``.

    A run of capitalised words (joined by "&", "of (the)", "de", "van", "von") is a name
    once leading words are dropped while they are stopwords, month or weekday names, or open
    a sentence without being ``vocab.capitals`` and either stand alone or are common words
    (in ``vocab.lower``): "Customers may ..." holds no name, "Tobias Renn was ..." and
    "Once Kestrel Plus ..." hold "Tobias Renn" and "Kestrel Plus". A trailing possessive
    "'s" is dropped. ``vocab`` defaults to ``NameVocab.of([text])``; pass the corpus's."""
    vocab = vocab if vocab is not None else NameVocab.of([text])
    out: list[tuple[int, int, str]] = []
    for m in _NAME.finditer(text):
        start, name = m.start(), m.group(0)
        at_start = _opens_sentence(text, start)
        while name:
            parts = name.split()
            first = parts[0]
            bare = re.sub(r"['’]s$", "", first)
            strip = first.lower() in STOPWORDS or first in _NOT_NAMES
            if not strip and at_start and bare not in vocab.capitals:
                strip = len(parts) == 1 or bare.lower() in vocab.lower
            if not strip:
                break
            stripped = name[len(first) :].lstrip()
            start += len(name) - len(stripped)
            name, at_start = stripped, False
        name = re.sub(r"['’]s$", "", name)
        if len(name) > 1 and name not in _NOT_NAMES:
            out.append((start, start + len(name), name))
    return out


def _cues(text: str, start: int, end: int) -> set[str]:
    """The lower-case words just before (articles skipped) and just after a name."""
    cues: set[str] = set()
    before = [w for w in re.findall(r"[\w’'-]+", text[max(0, start - 40) : start])]
    while before and before[-1].lower() in _ARTICLES:
        before.pop()
    if before and before[-1].islower():
        cues.add(before[-1])
    after = re.match(r"\s+([\w’'-]+)", text[end : end + 40])
    if after and after.group(1).islower():
        cues.add(after.group(1))
    return cues


@dataclass(frozen=True)
class NameInfo:
    """Where a corpus name occurs and the words around it (its "rough kind")."""

    doc_ids: frozenset[str]
    cues: frozenset[str]


def corpus_names(texts: Mapping[str, str], vocab: NameVocab | None = None) -> dict[str, NameInfo]:
    """Every name of the corpus (``{doc_id: text}``), sorted, with the documents where it
    occurs and its context cues; a document's entity candidates are the names occurring in
    other documents (see ``mutate_entity``). ``vocab`` defaults to the corpus's."""
    vocab = vocab if vocab is not None else NameVocab.of(texts.values())
    docs: dict[str, set[str]] = {}
    cues: dict[str, set[str]] = {}
    for doc_id, text in texts.items():
        for s, e, name in find_names(text, vocab):
            docs.setdefault(name, set()).add(doc_id)
            cues.setdefault(name, set()).update(_cues(text, s, e))
    return {n: NameInfo(frozenset(docs[n]), frozenset(cues[n])) for n in sorted(docs)}


def _kind_tiers(
    old: str, old_cues: frozenset[str], pool: Sequence[str], cues: Mapping[str, frozenset[str]]
) -> list[list[str]]:
    n = len(old.split())
    content = {c for c in old_cues if c not in STOPWORDS}
    function = old_cues - content
    return [
        [c for c in pool if content & cues.get(c, frozenset())],
        [c for c in pool if n > 1 and len(c.split()) > 1 and c.split()[-1] == old.split()[-1]],
        [c for c in pool if len(c.split()) == n and function & cues.get(c, frozenset())],
        [c for c in pool if len(c.split()) == n],
        list(pool),
    ]


def mutate_entity(
    text: str,
    rng: np.random.Generator,
    candidates: Mapping[str, NameInfo] | Sequence[str],
    *,
    within: Span | None = None,
    context: str | None = None,
    vocab: NameVocab | None = None,
) -> Mutation | None:
    """Swap one capitalised name for a corpus name of the same rough kind.

    ``candidates``: names from other documents, with their ``NameInfo`` (from
    ``corpus_names``) or as a plain sequence. The draw is uniform within the first non-empty
    tier: names sharing a content-word cue with the original (the words around it: "the
    Lenne river" and "the Dorn river" share "river"); multi-word names with the same last
    word ("Brenholt Group", "Ostrel Group"); names of the same length sharing a function-word
    cue ("in Castaby", "in Marrowby"); names of the same length; any name."""
    names = [n for n in find_names(text, vocab) if _overlaps(n[0], n[1], within)]
    if not names:
        return None
    s, e, old = _pick(rng, names)
    info = dict(candidates) if isinstance(candidates, Mapping) else {}
    cue_of = {c: i.cues for c, i in info.items()}
    ctx = f" {normalize_answer(context if context is not None else text)} "
    old_norm = normalize_answer(old)
    pool = []
    for c in sorted(candidates):
        c_norm = normalize_answer(c)
        if not c_norm or c_norm in old_norm or old_norm in c_norm or f" {c_norm} " in ctx:
            continue
        pool.append(c)
    if not pool:
        return None
    old_cues = frozenset(_cues(text, s, e))
    if context is not None:
        for m in re.finditer(r"(?<![\w’'-])" + re.escape(old) + r"(?![\w’'-])", context):
            old_cues |= _cues(context, m.start(), m.end())
    tier = next(t for t in _kind_tiers(old, old_cues, pool, cue_of) if t)
    return _replace("entity", text, s, e, _pick(rng, tier))


# -- dispatch and near-duplicates ---------------------------------------------------------
def mutate(
    kind: str,
    text: str,
    rng: np.random.Generator,
    *,
    within: Span | None = None,
    context: str | None = None,
    candidates: Mapping[str, NameInfo] | Sequence[str] = (),
    vocab: NameVocab | None = None,
) -> Mutation | None:
    """The single-fact mutation ``kind`` of ``text`` (``number``, ``date``, ``negation``,
    ``entity``), or None when it does not apply."""
    if kind == "number":
        return mutate_number(text, rng, within=within, context=context)
    if kind == "date":
        return mutate_date(text, rng, within=within, context=context)
    if kind == "negation":
        return mutate_negation(text, rng, within=within, context=context)
    if kind == "entity":
        return mutate_entity(text, rng, candidates, within=within, context=context, vocab=vocab)
    raise ValueError(f"unknown mutation kind {kind!r}; known: {', '.join(CHANGE_KINDS)}")


def near_duplicate(
    document: str,
    sentence: Span,
    rng: np.random.Generator,
    *,
    within: Span | None = None,
    candidates: Mapping[str, NameInfo] | Sequence[str] = (),
    kinds: Sequence[str] = CHANGE_KINDS,
    vocab: NameVocab | None = None,
) -> Mutation | None:
    """``document`` with one fact of ``document[sentence[0]:sentence[1]]`` changed: the
    change kind is drawn uniformly among ``kinds`` that apply (each tried with its own child
    stream of ``rng``). Spans (``within`` included) are offsets into ``document``."""
    s0, s1 = sentence
    text = document[s0:s1]
    local = None if within is None else (max(within[0], s0) - s0, min(within[1], s1) - s0)
    # One child stream per kind (drawn in ``kinds`` order), then the choice among those
    # that apply: deterministic in ``rng``'s state.
    seeds = [int(x) for x in rng.integers(0, 2**63 - 1, size=len(kinds))]
    applicable: list[tuple[str, Mutation]] = []
    for kind, seed in zip(kinds, seeds):
        trial = mutate(
            kind,
            text,
            np.random.default_rng(seed),
            within=local,
            context=document,
            candidates=candidates,
            vocab=vocab,
        )
        if trial is not None:
            applicable.append((kind, trial))
    if not applicable:
        return None
    kind, m = applicable[int(rng.integers(len(applicable)))]
    return Mutation(
        kind="near_duplicate",
        change=kind,
        text=document[:s0] + m.text + document[s1:],
        old=m.old,
        new=m.new,
        start=s0 + m.start,
        end=s0 + m.end,
        new_start=s0 + m.new_start,
        new_end=s0 + m.new_end,
    )

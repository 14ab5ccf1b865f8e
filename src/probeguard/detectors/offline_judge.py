"""The offline judge: lexical entailment of a claim by a chunk, aware of numbers, dates,
names and negation (no model). It reuses the number, date and negation readers
(``probeguard.nlp.mentions``), the stemming (``probeguard.nlp.stemming``) and the extractive
generator's sentence analysis (``probeguard.nlp.support``).

**Rules** (one claim ``c``, one chunk ``k``; pair-local, so the order of the
chunks cannot change a cell). Words are ``content_words`` stemmed with
``stem``; ``T(c)`` drops negation cues, light verbs (have, has, had, get, gets,
got) and words holding a digit (numbers are checked by rule). For each sentence ``s_j`` of
``k`` with stems ``S_j`` and, when it opens with a pronoun, the stems ``P_j`` inherited from the
sentence before it (one-step anaphora, as in the extractive generator)::

    cov(c, s_j) = (|T ∩ S_j| + 0.75·|T ∩ (P_j − S_j)|) / |T|

* **about**: ``cov ≥ about`` (default 0.5) — the sentence talks about the claim.
* **numbers, years and dates** are read the same way in the claim and in ``s_j``:
  ``number_mentions(every_kind=True)`` (plain, currency, percent, and years — "1774." as much
  as "in 1774" — ordinals "12th", decades "1970s", numbers in brackets "(118)"); calendar
  dates (a month or a day: ``date_mentions``) are compared field by field, and the year of a
  calendar date also matches a claim year.
* **conflicts** of an *about* sentence that holds every capitalised name of the claim
  (claim-initial word and dates excluded; names are ``words`` tokens, so "D.C." is one):
  a claim number with no equal number in ``s_j`` (``same_number``: percent only equals
  percent, ordinal ordinal, decade decade) while ``s_j`` holds a different number of the same
  kind before the same unit word (the next content word: "45 days" vs "30 days";
  "$12 per month" vs "$15 per month"); a claim year none of whose equals is in ``s_j`` while
  ``s_j`` holds another year (alone or in a calendar date); a claim calendar date that
  disagrees with a date or year of ``s_j`` on a field both carry, when none agrees; or, when
  ``cov ≥ support``, the opposite **polarity** of a predicate both hold ("are not
  refundable" vs "are refundable"; below).
* **supported**: some sentence has ``cov ≥ support`` (default 0.75), every claim number and
  date matched in it, every claim name in ``S_j ∪ P_j``, no conflict, and every negated
  predicate of the claim in ``s_j`` (or, with ``P_j``, the sentence before it).
* **contradicted**: otherwise, when some *about* sentence has a conflict.
* **unsupported**: otherwise; the evidence is the sentence of highest ``cov``.
* **unscored**: ``T(c)`` is empty and the claim holds no number (of any kind) or date.

**Question-anchored claims.** A *value answer* — a bare claim (no verb-ish word,
``detectors.claims.is_bare``) that is a number, year or date with at most one content word
("1774", "25", "30 times", "the 1970s"), or any claim without content words — is true of
many sentences: what it answers lives in its question ``q``. Judged with its question
(``judge(..., question=q)``), such a claim also needs the sentence to be about the question
(bare *entity* answers, "Denver Broncos", carry their own words and are judged on them:
anchoring them too cost 4 points of HaluEval AUROC in ``probeguard bench judge``). With
``Q`` the question's stemmed content words (``nlp.support.question_terms``,
fillers and words holding a digit left out)::

    covq(q, s_j) = (|Q ∩ S_j| + 0.75·|Q ∩ (P_j − S_j)|) / |Q|

and, for the claim's own words, ``cov`` as above (taken as 1 when ``T(c)`` is empty: its
numbers and dates are checked by rule). An anchored claim is *about* ``s_j`` when
``cov ≥ about`` and ``covq ≥ anchor``, and *supported* by it when ``cov ≥ support`` and
``covq ≥ anchor`` (default 0.25) with the number, date, name and conflict rules unchanged; its
``score`` is ``min(cov, covq)``. **Bridges** (multi-hop questions, whose words sit in
another chunk than the answer: "What nationality was James Henry Miller's wife?" answered by
"Peggy Seeger is an American folksinger"): a sentence ``b`` of another chunk with
``covq(b) ≥ anchor`` bridges to the chunk of ``s_j`` when a capitalised name of ``b`` outside
``Q`` (the bridge entity; hyphenated names split) is among the chunk's stems; then ``covq(s_j)`` is taken
over ``S_j ∪ B`` when that is higher. Bridges need the other chunks, so ``judge_pair`` has none; they depend on the set
of chunks, never on their order. So "1774" for "When did Priestley recognise oxygen?" is
supported by "Joseph Priestley recognised oxygen in 1774." and not by an unrelated sentence
holding 1774, and "1985" is not contradicted by an unrelated "2007". Without a question (or
when ``Q`` is empty) a claim is judged on its own words, numbers and dates as before. The question reaches judges that cannot read it (NLI,
LLM, third-party) as text: ``detectors.judges.judge_claims`` rewrites each bare claim as
``"<question> — <claim>"`` for them.

**Polarity** is read per predicate, never from a negation near the matched words. The
*predicates* of a text are its verb-ish words (``claims.VERBISH`` or "-ed", auxiliaries
aside) and the word an auxiliary or copula carries (the first after it that is no
auxiliary, negation, stopword or adverb: "are not *refundable*", "is no longer *used*"); a
text whose words are all capitalised is a name and has none. The *polarity* of a word is
the parity of the negation cues (``negation_cues``: "No. 1" and the "No" of "No Child Left
Behind" are none) before it in its clause, a clause opening at a ``clause_spans`` cut, at
``, ; : —`` and at a subordinator ("that", "which", "because", ...). A claim and a sentence
are opposite when a predicate both hold has opposite polarities (at its predicate
occurrences, in order, when it is a predicate of both). So a claim without a predicate — a
noun phrase, a name, a number, as short answers are — is never contradicted by polarity:
"reducing poverty" is supported by "... it is not sufficient for progress on reducing
poverty". A claim with no listed verb ("The company manufactures boots") against a sentence
that negates one of its later words as a predicate ("does not manufacture") is unsupported.

**Comparisons.** A claim with a comparative or superlative word (``_TIME_ORDER``: "first",
"earlier", "older", "later", "younger", ...; ``_AMOUNT_ORDER``: "more", "higher", "closer",
"largest", "ranks", ...; not inside a name, not "more than" a number nor a negated "no
more") relates two things, so a sentence about one of them does not support it on word
overlap. It is supported by a sentence that also holds the comparative word (stopwords
included: "one of the most common"), or, for a time comparative answering a question that
offers two alternatives ("Who was born first, Pablo Trapero or Aleksander Ford?": the names
around " or "), when the claim names one alternative and the dates put it first (−1) or
last (+1): each alternative's date is the first year of the first sentence of the chunks
that names it. Dates that put it the other way contradict it ("Pablo Trapero was born
first." against "Pablo Trapero (Born 4 October 1971)" and "Aleksander Ford (born ...; 24
November 1908 ...)"). Other comparisons ("Chelone has more species.", "... ranks higher.",
"... is closer.") are unsupported unless stated: the judge orders no amounts.

``score`` is the deciding sentence's ``cov``. Names are compared as stems, so a name missing
from the chunk makes a claim unsupported, never contradicted: "We ship to Brazil" against
"We ship to Canada" is not a contradiction (both can be true). Paraphrase defeats it
("send back" vs "return"): it is a lexical judge.

The offline **relevance** of a statement to a question (``OfflineJudge.relevance``, used by
contextual relevancy) is the extractive generator's idf-weighted support
(``probeguard.nlp.support.support_scores``, no number bonus) ``≥ relevance`` (default 0.35, its ``min_support``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from probeguard.core.hashing import digest
from probeguard.core.pipeline import Context
from probeguard.detectors.claims import VERBISH, AtomicClaim, clause_spans, is_bare
from probeguard.detectors.judges import Judgment, Relevance, Verdict, as_contexts, claim_texts
from probeguard.nlp.mentions import (
    NEGATION_CUES,
    DateMention,
    NumberMention,
    date_mentions,
    is_negation,
    negation_cues,
    number_mentions,
    same_kind,
    same_number,
)
from probeguard.nlp.stemming import stem
from probeguard.nlp.support import analysed_sentences, question_terms, support_scores
from probeguard.nlp.text import STOPWORDS, content_words, word_spans, words

__all__ = ["OfflineJudge", "best_sentence"]

_LIGHT = frozenset({"have", "has", "had", "get", "gets", "got"})
_UNIT_SKIP = frozenset({"per", "a", "an", "the", "of", "each", "every", "in"})
_ANAPHORA = 0.75


@lru_cache(maxsize=16384)
def _terms(text: str) -> frozenset[str]:
    return frozenset(
        stem(w)
        for w in content_words(text)
        if w not in NEGATION_CUES
        and not w.endswith(("n't", "n’t"))
        and w not in _LIGHT
        and not any(ch.isdigit() for ch in w)
    )


@lru_cache(maxsize=16384)
def _names(text: str) -> frozenset[str]:
    """Stems of capitalised words after the first word, outside dates. The words are
    ``words``' tokens, as in the sentences' stems: "D.C." is one name, "d.c"."""
    dates = [(d.start, d.end) for d in date_mentions(text)]
    first = re.match(r"\s*\S+", text)
    skip = first.end() if first else 0
    out = set()
    for token, start, _ in word_spans(text):
        if not token[0].isupper() or start < skip or any(s <= start < e for s, e in dates):
            continue
        w = token.lower()
        if w not in STOPWORDS:
            out.add(stem(w))
    return frozenset(out)


@dataclass(frozen=True)
class _Sentence:
    text: str
    start: int
    end: int
    own: frozenset[str]
    inherited: frozenset[str]


@lru_cache(maxsize=8192)
def _chunk_sentences(text: str) -> tuple[_Sentence, ...]:
    """The extractive generator's sentence analysis (stems and one-step anaphora, cached),
    with each sentence's span in ``text`` (memoised: a tuple of frozen sentences)."""
    out: list[_Sentence] = []
    pos = 0
    for sentence, own, inherited, _ in analysed_sentences(text):
        start = text.find(sentence, pos)
        start = pos if start < 0 else start
        pos = start + len(sentence)
        out.append(_Sentence(sentence, start, pos, own, inherited))
    return tuple(out)


def _coverage(terms: frozenset[str], sentence: _Sentence) -> float:
    """``cov`` (module docstring); 0.0 for no terms: a claim without content words is about
    nothing on its own (its about-ness must come from its question, ``_anchor``)."""
    if not terms:
        return 0.0
    return (len(terms & sentence.own) + _ANAPHORA * len(terms & sentence.inherited)) / len(terms)


_NAME = re.compile(r"\b[A-Z][\w'’-]*")
"""A capitalised word (hyphens and apostrophes kept: "Skiffle-Bluesband", "O'Neill")."""

_FRAMING = frozenset(
    stem(w)
    for w in "type kind sort name named called term form happen happened out along however".split()
)
"""Words that frame a question rather than say what it is about ("what *type* of ...")."""


@lru_cache(maxsize=4096)
def _question_words(question: str | None) -> frozenset[str]:
    """``Q``: the question's stemmed content words (``question_terms`` ∩ ``T``: no fillers,
    light verbs, negation cues or digits), framing words ("type", "name") left out."""
    if not question:
        return frozenset()
    return (question_terms(question) & _terms(question)) - _FRAMING


def _entities(text: str, q: frozenset[str]) -> frozenset[str]:
    """Stems of the capitalised words of ``text`` outside ``Q`` and stopwords, hyphenated
    names split ("Skiffle-Bluesband" → skiffl, bluesband): the entities a bridge can name."""
    return _capitalised(text) - q


@lru_cache(maxsize=8192)
def _capitalised(text: str) -> frozenset[str]:
    """``_entities`` before ``Q`` is taken out (per sentence, memoised)."""
    out = set()
    for m in _NAME.finditer(text):
        for part in re.split(r"[-'’]", m.group(0).lower()):
            if len(part) > 1 and part not in STOPWORDS:
                out.add(stem(part))
    return frozenset(out)


def _bridges(
    q: frozenset[str], sentences: Sequence[Sequence[_Sentence]], anchor: float
) -> list[list[_Sentence]]:
    """For each chunk, its bridges (module docstring): sentences of the *other* chunks about
    the question (``covq ≥ anchor``) that name an entity outside ``Q`` the chunk holds."""
    about = [
        [(s, _entities(s.text, q)) for s in chunk if _coverage(q, s) >= anchor]
        for chunk in sentences
    ]
    held = [frozenset().union(*(s.own for s in chunk)) for chunk in sentences]
    return [
        [b for m, bs in enumerate(about) if m != k for b, e in bs if e & held[k]]
        for k in range(len(sentences))
    ]


def _needs_anchor(claim: str, terms: frozenset[str]) -> bool:
    """A claim judged with its question's words: a bare claim (no verb-ish word) that is a
    number, year or date with at most a unit word ("1774", "25", "30 times", "the 1970s") or
    has no content words at all. Such a value is true of many sentences; only the question
    says which one it answers. Bare *entity* answers ("Denver Broncos") carry their own
    words and are judged on them."""
    if not terms:
        return True
    if not is_bare(claim):
        return False
    has_value = bool(_numbers(claim) or date_mentions(claim))
    return has_value and len(terms) <= 1


_TIME_ORDER = {
    **dict.fromkeys("first earlier earliest older oldest sooner".split(), -1),
    **dict.fromkeys("later latest younger youngest newer newest".split(), 1),
}
"""Comparatives of time: −1 claims the earlier date, +1 the later one."""
_AMOUNT_ORDER = frozenset(
    """more most less least fewer fewest higher highest lower lowest larger largest smaller
smallest bigger biggest greater greatest longer longest shorter shortest taller tallest
closer closest nearer nearest farther farthest further furthest ranks""".split()
)
"""Comparatives of amount, distance and rank: stated, or unsupported (no order check)."""
_ALTERNATIVES = re.compile(
    r"(?:^|[,:]\s*|\b(?:is|are|was|were)\s+)([^,:?]+?)\s+or\s+([^,:?]+?)(?=[?,]|\s+the\s|$)"
)


def _comparatives(claim: str) -> tuple[frozenset[str], int]:
    """Stems of the comparative words of ``claim`` and the time order it claims (−1, +1, 0
    when none): "more than 30" and "no more" bound a number or negate, they compare nothing."""
    raw = _TOKEN.findall(claim)
    ws = [w.lower() for w in raw]
    found, order = set(), 0
    for i, w in enumerate(ws):
        nxt = ws[i + 1] if i + 1 < len(ws) else ""
        if w in ("more", "less", "fewer") and (nxt == "than" or (i and is_negation(ws[i - 1]))):
            continue
        if i and raw[i][0].isupper():  # part of a name or title: "And There's More"
            continue
        if w in _TIME_ORDER or w in _AMOUNT_ORDER:
            found.add(stem(w))
            order = order or _TIME_ORDER.get(w, 0)
    return frozenset(found), order


def _word_stems(texts: Sequence[str]) -> frozenset[str]:
    """Stems of every word of ``texts``, stopwords included ("most", "more")."""
    return frozenset(stem(w.lower()) for t in texts for w in _TOKEN.findall(t))


def _alternatives(question: str | None) -> list[frozenset[str]]:
    """The name stems of the two alternatives a question offers ("Who was born first,
    Pablo Trapero or Aleksander Ford?"); empty when it offers none."""
    m = _ALTERNATIVES.search(question or "")
    if m is None:
        return []
    alts = [_entities(m.group(k), frozenset()) for k in (1, 2)]
    return alts if all(alts) and alts[0] != alts[1] else []


def _time_order(
    claim: str, order: int, alts: list[frozenset[str]], sentences: Sequence[_Sentence]
) -> bool | None:
    """Whether the dates in ``sentences`` put the claim's alternative first (``order`` −1)
    or last (+1): each alternative's date is the first year of the first sentence that
    names it; None when the claim names no single alternative or one has no date."""
    mine = _entities(claim, frozenset())
    named = [a for a in alts if a <= mine]
    if order == 0 or len(named) != 1:
        return None
    years = []
    for a in alts:
        year = next(
            (
                ys[0][0]
                for s in sentences
                if a <= (s.own | s.inherited)
                for ys in [_years(s.text)]
                if ys
            ),
            None,
        )
        if year is None:
            return None
        years.append(year)
    own = years[alts.index(named[0])]
    others = [y for a, y in zip(alts, years) if a is not named[0]]
    return all((own - y) * order > 0 for y in others)


def _anchored_coverage(q: frozenset[str], s: _Sentence, bridges: Sequence[_Sentence]) -> float:
    """``covq`` of ``s``, or of ``s`` joined with one of its chunk's bridges when higher."""
    best = _coverage(q, s)
    for b in bridges:
        joined = _Sentence(s.text, s.start, s.end, s.own | b.own, s.inherited)
        best = max(best, _coverage(q, joined))
    return best


def best_sentence(claim: str, text: str) -> tuple[str, tuple[int, int] | None, float]:
    """The sentence of ``text`` that covers most of ``claim``'s words (``cov`` above), its
    span and its ``cov``; ``("", None, 0.0)`` for a text without sentences."""
    terms = _terms(claim)
    best: tuple[str, tuple[int, int] | None, float] = ("", None, 0.0)
    for s in _chunk_sentences(text):
        cov = _coverage(terms, s)
        if cov > best[2] or best[1] is None:
            best = (s.text, (s.start, s.end), cov)
    return best


def _unit_after(text: str, end: int) -> str:
    for w in words(text[end : end + 40]):
        if w not in _UNIT_SKIP and not any(ch.isdigit() for ch in w):
            return stem(w)
    return ""


def _with_unit(text: str, start: int, end: int) -> str:
    """The number mention and the word after it ("45 days")."""
    m = re.match(r"\s+[A-Za-z][\w'’-]*", text[end:])
    return text[start : end + (m.end() if m else 0)]


def _numbers(text: str) -> list[NumberMention]:
    """Every number mention a claim can assert (``every_kind``: years, ordinals, decades and
    numbers in brackets too), read the same way in a claim and in a sentence."""
    return number_mentions(text, every_kind=True)


def _calendar_dates(text: str) -> list[DateMention]:
    """Dates with a month or a day; a year alone is a year mention (``_numbers``)."""
    return [d for d in date_mentions(text) if d.format != "y"]


def _years(text: str) -> list[tuple[int, int, int]]:
    """``(year, start, end)`` of every year of ``text``: its year mentions and the years of
    its calendar dates."""
    out = [(int(n.value), n.start, n.end) for n in _numbers(text) if n.kind == "year"]
    out += [(d.year, d.start, d.end) for d in _calendar_dates(text) if d.year is not None]
    return sorted(out, key=lambda y: y[1])


def _number_check(claim: str, sentence: str) -> tuple[bool, list[str]]:
    """(every claim number has an equal one in the sentence, conflicts). A claim year is
    also matched by a calendar date of that year, and conflicts with any other year of the
    sentence; other numbers conflict with a number of the same kind before the same unit
    word."""
    mine, theirs = _numbers(claim), _numbers(sentence)
    years = _years(sentence) if any(n.kind == "year" for n in mine) else []
    matched, conflicts = True, []
    for n in mine:
        if any(same_number(m, n) for m in theirs) or (
            n.kind == "year" and any(y == n.value for y, _, _ in years)
        ):
            continue
        matched = False
        if n.kind == "year":
            if years:
                _, ys, ye = years[0]
                conflicts.append(
                    f"the claim says '{claim[n.start : n.end]}' where "
                    f"the context says '{sentence[ys:ye]}'"
                )
            continue
        unit = _unit_after(claim, n.end)
        for m in theirs:
            if same_kind(m, n) and m.kind != "year" and _unit_after(sentence, m.end) == unit:
                conflicts.append(
                    f"the claim says '{_with_unit(claim, n.start, n.end)}' where "
                    f"the context says '{_with_unit(sentence, m.start, m.end)}'"
                )
                break
    return matched, conflicts


def _date_check(claim: str, sentence: str) -> tuple[bool, list[str]]:
    """(every calendar date of the claim agrees with one of the sentence on every field it
    carries, conflicts). The sentence's years count as dates with a year only."""
    mine = _calendar_dates(claim)
    if not mine:
        return True, []
    theirs = [(m.fields(), m.start, m.end) for m in _calendar_dates(sentence)]
    theirs += [
        ({"year": int(n.value), "month": None, "day": None}, n.start, n.end)
        for n in _numbers(sentence)
        if n.kind == "year"
    ]
    matched, conflicts = True, []
    for d in mine:
        df = d.fields()
        ok, clash = False, None
        for mf, ms, me in theirs:
            shared = [f for f in df if df[f] is not None and mf[f] is not None]
            if not shared:
                continue
            if all(df[f] == mf[f] for f in shared):
                ok = ok or all(mf[f] is not None for f in df if df[f] is not None)
            elif clash is None:
                clash = (ms, me)
        if not ok and clash is not None:
            conflicts.append(
                f"the claim says '{claim[d.start : d.end]}' where the context "
                f"says '{sentence[clash[0] : clash[1]]}'"
            )
        matched = matched and ok
    return matched, conflicts


_AUX = frozenset(
    """is are was were be been being am 's 're has have had do does did can could may might
must shall should will would isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't
didn't cannot can't couldn't won't wouldn't shouldn't mustn't mightn't""".split()
)
"""Auxiliaries and copulas: the predicate is the word they carry ("are not *refundable*")."""
_VERB_GROUP = frozenset(
    """not no never also still always often only even yet longer ever quite very so now then
once later already long however""".split()
)
"""Words skipped between an auxiliary and the word it carries ("is no longer *used*"), with
any adverb in "-ly" ("are not usually *regulated*")."""
_SCOPE_WORDS = frozenset(
    """that which who whom whose where when because although though unless if whereas while
but since whether until""".split()
)
"""Words that open a clause of their own: a negation before them does not reach past them."""
_SCOPE_MARKS = re.compile(r"[,;:—–]")
_TOKEN = re.compile(r"\w+(?:[.,'’-]\w+)*")


@dataclass(frozen=True)
class _Polarity:
    predicates: dict[str, tuple[int, ...]]
    """Stem of each predicate (rules in the module docstring) -> its polarity at each of its
    occurrences as a predicate, in order."""
    at: dict[str, tuple[int, ...]]
    """Stem of every word -> its polarity at each of its occurrences, in order."""

    @property
    def negated(self) -> frozenset[str]:
        """The predicates negated somewhere ("are not *refundable*")."""
        return frozenset(k for k, v in self.predicates.items() if 1 in v)


def _is_name(text: str) -> bool:
    """Every word capitalised (function words aside): a name or title, not a clause."""
    ws = re.findall(r"[^\W\d_][\w'’-]*", text)
    return bool(ws) and all(w[0].isupper() or w.lower() in STOPWORDS for w in ws)


def _skipped(word: str) -> bool:
    return (
        word in _AUX
        or word in _VERB_GROUP
        or word in STOPWORDS
        or (len(word) > 4 and word.endswith("ly"))
    )


@lru_cache(maxsize=4096)
def _polarity(text: str) -> _Polarity:
    """The predicates of ``text`` and the polarity of each word (rules in the module
    docstring)."""
    toks = list(_TOKEN.finditer(text))
    lower = [m.group(0).lower() for m in toks]
    stems = [stem(w) for w in lower]
    cues = {s for s, _ in negation_cues(text)}
    cuts = {s for s, _ in clause_spans(text)}
    parity: list[int] = []
    prev_end, n = 0, 0
    for m, w in zip(toks, lower):
        if m.start() in cuts or w in _SCOPE_WORDS or _SCOPE_MARKS.search(text, prev_end, m.start()):
            n = 0  # a new clause: earlier cues do not reach into it
        parity.append(n % 2)
        n += m.start() in cues
        prev_end = m.end()
    at: dict[str, list[int]] = {}
    for st, par in zip(stems, parity):
        at.setdefault(st, []).append(par)
    heads: set[int] = set()
    if not _is_name(text):
        for i, w in enumerate(lower):
            if w in _AUX:
                for j in range(i + 1, min(i + 5, len(lower))):
                    if not _skipped(lower[j]):
                        heads.add(j)
                        break
            elif (w in VERBISH or (i > 0 and len(w) > 3 and w.endswith("ed"))) and not (
                is_negation(w) or w in STOPWORDS
            ):
                heads.add(i)
    predicates: dict[str, list[int]] = {}
    for i in sorted(heads):
        predicates.setdefault(stems[i], []).append(parity[i])
    return _Polarity(
        {k: tuple(v) for k, v in predicates.items()}, {k: tuple(v) for k, v in at.items()}
    )


def _polarity_agrees(claim: _Polarity, sentence: str) -> bool | None:
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
    other = _polarity(sentence)
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


def _may_support(claim: _Polarity, text: str, sentences: list[str]) -> bool:
    """Polarity lets ``sentences`` (a sentence and, when it opens with a pronoun, the one
    before it) support the claim: a negated predicate of the claim is held by one of them
    (a negation is stated with its predicate: "Tesla was not renowned" is not supported by
    "He lived in hotels"); and a claim whose predicate the word list misses holds no
    predicate of theirs with the opposite polarity ("The company manufactures boots" vs
    "The company does not manufacture boots": unsupported, not contradicted)."""
    if not all(any(p in _polarity(t).at for t in sentences) for p in claim.negated):
        return False
    if claim.predicates or _is_name(text):
        return True
    # the claim's words after a first content word (its subject): a bare noun phrase or a
    # single word ("monophyletic") has no predicate to read
    ws = [w.lower() for w in _TOKEN.findall(text)]
    first = next((i for i, w in enumerate(ws) if w not in STOPWORDS), len(ws))
    later = {stem(w) for w in ws[first + 1 :]}
    for t in sentences:
        for p, theirs in _polarity(t).predicates.items():
            mine = claim.at.get(p)
            if p in later and mine and not set(mine) & set(theirs):
                return False
    return True


@lru_cache(maxsize=64)
def _fingerprint(config: tuple[tuple[str, Any], ...]) -> str:
    return digest(dict(config))[:16]


class OfflineJudge:
    """Lexical entailment judge aware of numbers, dates, names and negation (rules in the
    module docstring). ``support``: least ``cov`` to support; ``about``: least ``cov`` for a
    sentence to be about the claim (and so able to contradict it); ``relevance``: least
    idf-weighted support for a statement to be relevant to a question."""

    name = "offline"
    version = 3
    """Bumped when a rule changes verdicts. 2: years, ordinals, decades and numbers in
    brackets read alike in claim and context; dotted abbreviations one name; polarity read
    per predicate (module docstring), no longer from any negation cue in the clause that
    holds most of the claim's words. 3: a comparative claim needs
    the comparison stated or, for time, the dates in the right order (module docstring)."""

    accepts_question = True
    """``judge`` reads the question (question-anchored bare claims, module docstring)."""

    def __init__(
        self,
        support: float = 0.75,
        about: float = 0.5,
        relevance: float = 0.35,
        anchor: float = 0.25,
    ) -> None:
        if not 0.0 < about <= support <= 1.0:
            raise ValueError(
                f"need 0 < about <= support <= 1, got about={about}, support={support}"
            )
        if not 0.0 < relevance <= 1.0:
            raise ValueError(f"relevance must lie in (0, 1], got {relevance}")
        if not 0.0 < anchor <= 1.0:
            raise ValueError(f"anchor must lie in (0, 1], got {anchor}")
        self.support, self.about, self.relevance_threshold, self.anchor = (
            float(support),
            float(about),
            float(relevance),
            float(anchor),
        )

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "support": self.support,
            "about": self.about,
            "relevance": self.relevance_threshold,
            "anchor": self.anchor,
        }

    def fingerprint(self) -> str:
        return _fingerprint(tuple(self.config().items()))

    def judge(
        self,
        claims: Sequence[str | AtomicClaim],
        contexts: Sequence[Context | str],
        *,
        question: str | None = None,
    ) -> Judgment:
        """Every claim × every context; ``question`` anchors the bare claims (module
        docstring)."""
        texts, ctxs = claim_texts(claims), as_contexts(contexts)
        sentences = [_chunk_sentences(c.text) for c in ctxs]
        q = _question_words(question)
        bridges = (
            _bridges(q, sentences, self.anchor)
            if q and any(is_bare(t) for t in texts)
            else [[] for _ in ctxs]
        )
        every = [s for chunk in sentences for s in chunk]
        alts = _alternatives(question)
        # a claim text given twice (an answer that restates its reference) is one row, judged once
        row_of: dict[str, tuple[Verdict, ...]] = {}
        for t in texts:
            if t not in row_of:
                row_of[t] = tuple(
                    self._cell(t, c, s, q, b, every, alts)
                    for c, s, b in zip(ctxs, sentences, bridges)
                )
        rows = tuple(row_of[t] for t in texts)
        return Judgment(texts, ctxs, rows, self.name, {"fingerprint": self.fingerprint()})

    def judge_pair(
        self, claim: str, context: Context | str, *, question: str | None = None
    ) -> Verdict:
        """One cell."""
        ctx = as_contexts([context])[0]
        sentences = _chunk_sentences(ctx.text)
        return self._cell(
            claim,
            ctx,
            sentences,
            _question_words(question),
            every=sentences,
            alts=_alternatives(question),
        )

    def _cell(
        self,
        claim: str,
        ctx: Context,
        sentences: Sequence[_Sentence],
        q: frozenset[str] = frozenset(),
        bridges: Sequence[_Sentence] = (),
        every: Sequence[_Sentence] = (),
        alts: Sequence[frozenset[str]] = (),
    ) -> Verdict:
        terms = _terms(claim)
        compared, order = _comparatives(claim)
        ordered = _time_order(claim, order, list(alts), every) if compared else None
        anchor = q if q and _needs_anchor(claim, terms) else None
        if not terms and not _numbers(claim) and not date_mentions(claim):
            return Verdict(
                "unscored",
                chunk_id=ctx.chunk_id,
                reason="the claim has no content words, numbers or dates",
            )
        names = _names(claim)
        polarity = _polarity(claim)
        best: tuple[float, _Sentence] | None = None
        supported: tuple[float, _Sentence] | None = None
        conflict: tuple[float, _Sentence, str] | None = None
        for i, s in enumerate(sentences):
            own = _coverage(terms, s) if terms else 1.0
            if anchor is None:
                cov, about_q = own, True
            else:  # a bare claim: the sentence must also be about its question
                covq = _anchored_coverage(anchor, s, bridges)
                cov, about_q = min(own, covq), covq >= self.anchor
            if best is None or cov > best[0]:
                best = (cov, s)
            if own < self.about or not about_q:
                continue
            names_ok = names <= (s.own | s.inherited)
            n_ok, n_conf = _number_check(claim, s.text)
            d_ok, d_conf = _date_check(claim, s.text)
            conf = (n_conf + d_conf) if names_ok else []
            p_ok = True
            if own >= self.support and names_ok:
                texts = [s.text]
                agrees = _polarity_agrees(polarity, s.text)
                if s.inherited and i > 0:  # "It is not ...": the antecedent's predicates
                    texts.append(sentences[i - 1].text)
                    before = _polarity_agrees(polarity, texts[1])
                    agrees = before if agrees is None or before is False else agrees
                if agrees is False:
                    conf.append("the context states the opposite polarity")
                p_ok = _may_support(polarity, claim, texts)
                if ordered is False:
                    conf.append("the context's dates put the compared things the other way")
                elif compared and ordered is None:
                    p_ok = p_ok and compared <= _word_stems(texts)
            if conf:
                if conflict is None or cov > conflict[0]:
                    conflict = (cov, s, "; ".join(conf))
            elif own >= self.support and names_ok and n_ok and d_ok and p_ok:
                if supported is None or cov > supported[0]:
                    supported = (cov, s)
        if supported is not None:
            cov, s = supported
            return Verdict(
                "supported",
                round(cov, 4),
                ctx.chunk_id,
                s.text,
                (s.start, s.end),
                f"the sentence holds {cov:.0%} of the claim's words and its "
                "numbers, dates and names"
                + ("" if anchor is None else " (the claim anchored by its question's words)"),
            )
        if conflict is not None:
            cov, s, why = conflict
            return Verdict(
                "contradicted", round(cov, 4), ctx.chunk_id, s.text, (s.start, s.end), why
            )
        if best is None:
            return Verdict("unsupported", 0.0, ctx.chunk_id, reason="the chunk is empty")
        cov, s = best
        return Verdict(
            "unsupported",
            round(cov, 4),
            ctx.chunk_id,
            s.text,
            (s.start, s.end),
            f"the closest sentence holds {cov:.0%} of the claim's words"
            + ("" if anchor is None else " and its question's words")
            + ("" if cov < self.support else " but not all its numbers, dates and names"),
        )

    def relevance(self, question: str, statements: Sequence[str]) -> list[Relevance]:
        """Each statement's idf-weighted support for the question ≥ ``relevance``
        (``support_scores``; the best sentence when a statement has several)."""
        if not statements:
            return []
        scores = support_scores(
            question, [Context(str(i), s) for i, s in enumerate(statements)], number_bonus=0.0
        )
        if not scores:
            return [Relevance(None, reason="the question has no content words") for _ in statements]
        best = [0.0] * len(statements)
        for score, ci, _, _ in scores:
            best[ci] = max(best[ci], score)
        return [
            Relevance(
                b >= self.relevance_threshold,
                round(b, 4),
                f"covers {b:.0%} of the question's weighted words",
            )
            for b in best
        ]

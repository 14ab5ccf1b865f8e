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
  ``cov ≥ support``, a different negation parity (``negation_parity``: "are not refundable"
  vs "are refundable") between the claim and the clause of ``s_j`` (``clause_spans``) that
  holds most of its words.
* **supported**: some sentence has ``cov ≥ support`` (default 0.75), every claim number and
  date matched in it, every claim name in ``S_j ∪ P_j``, and no conflict.
* **contradicted**: otherwise, when some *about* sentence has a conflict.
* **unsupported**: otherwise; the evidence is the sentence of highest ``cov``.
* **unscored**: ``T(c)`` is empty and the claim holds no number (of any kind) or date.

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
from typing import Any

from probeguard.core.hashing import digest
from probeguard.core.pipeline import Context
from probeguard.detectors.claims import AtomicClaim, clause_spans
from probeguard.detectors.judges import Judgment, Relevance, Verdict, as_contexts, claim_texts
from probeguard.nlp.mentions import (
    NEGATION_CUES,
    DateMention,
    NumberMention,
    date_mentions,
    negation_parity,
    number_mentions,
    same_kind,
    same_number,
)
from probeguard.nlp.stemming import stem
from probeguard.nlp.support import analysed_sentences, support_scores
from probeguard.nlp.text import STOPWORDS, content_words, word_spans, words

__all__ = ["OfflineJudge", "best_sentence"]

_LIGHT = frozenset({"have", "has", "had", "get", "gets", "got"})
_UNIT_SKIP = frozenset({"per", "a", "an", "the", "of", "each", "every", "in"})
_ANAPHORA = 0.75


def _terms(text: str) -> frozenset[str]:
    return frozenset(
        stem(w)
        for w in content_words(text)
        if w not in NEGATION_CUES
        and not w.endswith(("n't", "n’t"))
        and w not in _LIGHT
        and not any(ch.isdigit() for ch in w)
    )


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


def _chunk_sentences(text: str) -> list[_Sentence]:
    """The extractive generator's sentence analysis (stems and one-step anaphora, cached),
    with each sentence's span in ``text``."""
    out: list[_Sentence] = []
    pos = 0
    for sentence, own, inherited, _ in analysed_sentences(text):
        start = text.find(sentence, pos)
        start = pos if start < 0 else start
        pos = start + len(sentence)
        out.append(_Sentence(sentence, start, pos, own, inherited))
    return out


def _coverage(terms: frozenset[str], sentence: _Sentence) -> float:
    if not terms:
        return 1.0
    return (len(terms & sentence.own) + _ANAPHORA * len(terms & sentence.inherited)) / len(terms)


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


def _local_parity(terms: frozenset[str], sentence: str) -> int:
    """Negation parity of the clause of ``sentence`` that holds most of ``terms`` (so "X can
    be refunded; after that Y is not refundable" has a positive clause about X)."""
    best, parity = -1, negation_parity(sentence)
    for s, e in clause_spans(sentence):
        clause = sentence[s:e]
        hits = len(terms & _terms(clause))
        if hits > best:
            best, parity = hits, negation_parity(clause)
    return parity


class OfflineJudge:
    """Lexical entailment judge aware of numbers, dates, names and negation (rules in the
    module docstring). ``support``: least ``cov`` to support; ``about``: least ``cov`` for a
    sentence to be about the claim (and so able to contradict it); ``relevance``: least
    idf-weighted support for a statement to be relevant to a question."""

    name = "offline"
    version = 2
    """Bumped when a rule changes verdicts (2: years, ordinals, decades and numbers in
    brackets read alike in claim and context; dotted abbreviations one name)."""

    def __init__(self, support: float = 0.75, about: float = 0.5, relevance: float = 0.35) -> None:
        if not 0.0 < about <= support <= 1.0:
            raise ValueError(
                f"need 0 < about <= support <= 1, got about={about}, support={support}"
            )
        if not 0.0 < relevance <= 1.0:
            raise ValueError(f"relevance must lie in (0, 1], got {relevance}")
        self.support, self.about, self.relevance_threshold = (
            float(support),
            float(about),
            float(relevance),
        )

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "support": self.support,
            "about": self.about,
            "relevance": self.relevance_threshold,
        }

    def fingerprint(self) -> str:
        return digest(self.config())[:16]

    def judge(
        self, claims: Sequence[str | AtomicClaim], contexts: Sequence[Context | str]
    ) -> Judgment:
        texts, ctxs = claim_texts(claims), as_contexts(contexts)
        sentences = [_chunk_sentences(c.text) for c in ctxs]
        rows = tuple(tuple(self._cell(t, c, s) for c, s in zip(ctxs, sentences)) for t in texts)
        return Judgment(texts, ctxs, rows, self.name, {"fingerprint": self.fingerprint()})

    def judge_pair(self, claim: str, context: Context | str) -> Verdict:
        """One cell."""
        ctx = as_contexts([context])[0]
        return self._cell(claim, ctx, _chunk_sentences(ctx.text))

    def _cell(self, claim: str, ctx: Context, sentences: list[_Sentence]) -> Verdict:
        terms = _terms(claim)
        if not terms and not _numbers(claim) and not date_mentions(claim):
            return Verdict(
                "unscored",
                chunk_id=ctx.chunk_id,
                reason="the claim has no content words, numbers or dates",
            )
        names = _names(claim)
        parity = negation_parity(claim)
        best: tuple[float, _Sentence] | None = None
        supported: tuple[float, _Sentence] | None = None
        conflict: tuple[float, _Sentence, str] | None = None
        for s in sentences:
            cov = _coverage(terms, s)
            if best is None or cov > best[0]:
                best = (cov, s)
            if cov < self.about:
                continue
            names_ok = names <= (s.own | s.inherited)
            n_ok, n_conf = _number_check(claim, s.text)
            d_ok, d_conf = _date_check(claim, s.text)
            conf = (n_conf + d_conf) if names_ok else []
            if cov >= self.support and names_ok and _local_parity(terms, s.text) != parity:
                conf.append("the context states the opposite polarity")
            if conf:
                if conflict is None or cov > conflict[0]:
                    conflict = (cov, s, "; ".join(conf))
            elif cov >= self.support and names_ok and n_ok and d_ok:
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
                "numbers, dates and names",
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

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
* **conflicts** of an *about* sentence that holds every capitalised name of the claim
  (claim-initial word and dates excluded): a claim number with no equal number in ``s_j``
  (``number_mentions``; percent only equals percent) while ``s_j`` holds a different number
  of the same kind before the same unit word (the next content word: "45 days" vs "30 days";
  "$12 per month" vs "$15 per month"); a claim date that disagrees with a date of ``s_j`` on a
  field both carry, when none of its dates agrees (``date_mentions``); or, when
  ``cov ≥ support``, a different negation parity (``negation_parity``: "are not refundable"
  vs "are refundable") between the claim and the clause of ``s_j`` (``clause_spans``) that
  holds most of its words.
* **supported**: some sentence has ``cov ≥ support`` (default 0.75), every claim number and
  date matched in it, every claim name in ``S_j ∪ P_j``, and no conflict.
* **contradicted**: otherwise, when some *about* sentence has a conflict.
* **unsupported**: otherwise; the evidence is the sentence of highest ``cov``.
* **unscored**: ``T(c)`` is empty and the claim holds no number or date, or ``T(c)`` is empty
  and no question anchors it (a claim without content words is about nothing, never about
  everything: "25" alone would match every sentence that holds a 25).

**Question-anchored claims.** A *bare* claim — a fragment without a verb-ish word
(``detectors.claims.is_bare``: "1774", "Denver Broncos", "reducing poverty") or without
content words — is a short answer: what it is about lives in its question ``q``. Judged with
its question (``judge(..., question=q)``), such a claim also needs the sentence to be about
the question. With ``Q`` the question's stemmed content words (``nlp.support.question_terms``,
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
when ``Q`` is empty) a bare claim with content words is judged on its own words as before; one
without content words is unscored. The question reaches judges that cannot read it (NLI,
LLM, third-party) as text: ``detectors.judges.judge_claims`` rewrites each bare claim as
``"<question> — <claim>"`` for them.

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
from probeguard.detectors.claims import AtomicClaim, clause_spans, is_bare
from probeguard.detectors.judges import Judgment, Relevance, Verdict, as_contexts, claim_texts
from probeguard.nlp.mentions import (
    NEGATION_CUES,
    date_mentions,
    negation_parity,
    number_mentions,
    same_number,
)
from probeguard.nlp.stemming import stem
from probeguard.nlp.support import analysed_sentences, question_terms, support_scores
from probeguard.nlp.text import STOPWORDS, content_words, words

__all__ = ["OfflineJudge", "best_sentence"]

_LIGHT = frozenset({"have", "has", "had", "get", "gets", "got"})
_UNIT_SKIP = frozenset({"per", "a", "an", "the", "of", "each", "every", "in"})
_ANAPHORA = 0.75
_NAME = re.compile(r"\b[A-Z][\w'’-]*")


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
    """Stems of capitalised words after the first word, outside dates."""
    dates = [(d.start, d.end) for d in date_mentions(text)]
    first = re.match(r"\s*\S+", text)
    skip = first.end() if first else 0
    out = set()
    for m in _NAME.finditer(text):
        if m.start() < skip or any(s <= m.start() < e for s, e in dates):
            continue
        w = m.group(0).lower()
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
    """``cov`` (module docstring); 0.0 for no terms: a claim without content words is about
    nothing on its own (its about-ness must come from its question, ``_anchor``)."""
    if not terms:
        return 0.0
    return (len(terms & sentence.own) + _ANAPHORA * len(terms & sentence.inherited)) / len(terms)


_FRAMING = frozenset(
    stem(w)
    for w in "type kind sort name named called term form happen happened out along however".split()
)
"""Words that frame a question rather than say what it is about ("what *type* of ...")."""


def _question_words(question: str | None) -> frozenset[str]:
    """``Q``: the question's stemmed content words (``question_terms`` ∩ ``T``: no fillers,
    light verbs, negation cues or digits), framing words ("type", "name") left out."""
    if not question:
        return frozenset()
    return (question_terms(question) & _terms(question)) - _FRAMING


def _entities(text: str, q: frozenset[str]) -> frozenset[str]:
    """Stems of the capitalised words of ``text`` outside ``Q`` and stopwords, hyphenated
    names split ("Skiffle-Bluesband" → skiffl, bluesband): the entities a bridge can name."""
    out = set()
    for m in _NAME.finditer(text):
        for part in re.split(r"[-'’]", m.group(0).lower()):
            if len(part) > 1 and part not in STOPWORDS:
                out.add(stem(part))
    return frozenset(out - q)


def _bridges(
    q: frozenset[str], sentences: list[list[_Sentence]], anchor: float
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


def _number_check(claim: str, sentence: str) -> tuple[bool, list[str]]:
    """(every claim number has an equal one in the sentence, conflicts)."""
    mine, theirs = number_mentions(claim), number_mentions(sentence)
    matched, conflicts = True, []
    for n in mine:
        if any(same_number(m, n) for m in theirs):
            continue
        matched = False
        unit = _unit_after(claim, n.end)
        for m in theirs:
            if (m.kind == "percent") == (n.kind == "percent") and _unit_after(
                sentence, m.end
            ) == unit:
                conflicts.append(
                    f"the claim says '{_with_unit(claim, n.start, n.end)}' where "
                    f"the context says '{_with_unit(sentence, m.start, m.end)}'"
                )
                break
    return matched, conflicts


def _date_check(claim: str, sentence: str) -> tuple[bool, list[str]]:
    mine, theirs = date_mentions(claim), date_mentions(sentence)
    matched, conflicts = True, []
    for d in mine:
        df = d.fields()
        ok, clash = False, None
        for m in theirs:
            mf = m.fields()
            shared = [f for f in df if df[f] is not None and mf[f] is not None]
            if not shared:
                continue
            if all(df[f] == mf[f] for f in shared):
                ok = ok or all(mf[f] is not None for f in df if df[f] is not None)
            elif clash is None:
                clash = m
        if not ok and clash is not None:
            conflicts.append(
                f"the claim says '{claim[d.start : d.end]}' where the context "
                f"says '{sentence[clash.start : clash.end]}'"
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
        return digest(self.config())[:16]

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
        rows = tuple(
            tuple(self._cell(t, c, s, q, b) for c, s, b in zip(ctxs, sentences, bridges))
            for t in texts
        )
        return Judgment(texts, ctxs, rows, self.name, {"fingerprint": self.fingerprint()})

    def judge_pair(
        self, claim: str, context: Context | str, *, question: str | None = None
    ) -> Verdict:
        """One cell."""
        ctx = as_contexts([context])[0]
        return self._cell(claim, ctx, _chunk_sentences(ctx.text), _question_words(question))

    def _cell(
        self,
        claim: str,
        ctx: Context,
        sentences: list[_Sentence],
        q: frozenset[str] = frozenset(),
        bridges: Sequence[_Sentence] = (),
    ) -> Verdict:
        terms = _terms(claim)
        anchor = q if q and is_bare(claim) else None
        if not terms and not number_mentions(claim) and not date_mentions(claim):
            return Verdict(
                "unscored",
                chunk_id=ctx.chunk_id,
                reason="the claim has no content words, numbers or dates",
            )
        if not terms and anchor is None:
            return Verdict(
                "unscored",
                chunk_id=ctx.chunk_id,
                reason="the claim has no content words and no question to anchor it",
            )
        names = _names(claim)
        parity = negation_parity(claim)
        best: tuple[float, _Sentence] | None = None
        supported: tuple[float, _Sentence] | None = None
        conflict: tuple[float, _Sentence, str] | None = None
        for s in sentences:
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
            if own >= self.support and names_ok and _local_parity(terms, s.text) != parity:
                conf.append("the context states the opposite polarity")
            if conf:
                if conflict is None or cov > conflict[0]:
                    conflict = (cov, s, "; ".join(conf))
            elif own >= self.support and names_ok and n_ok and d_ok:
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

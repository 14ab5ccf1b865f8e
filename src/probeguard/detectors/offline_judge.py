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

    cov(c, s_j) = (|T ∩ S'_j| + 0.75·|T ∩ (P_j − S'_j)|) / |T|,   S'_j = S_j ∪ extra(T, S_j)

where ``extra`` holds the claim words the sentence states with a synonym, an irregular
past or another form ("send back" ~ "returned", "won" ~ "win", "died" ~ "dies";
``detectors.synonyms``), read only in a sentence that holds at least ``SYNONYM_FLOOR`` =
0.25 of ``T`` itself.

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
  date matched in it, every claim name in ``S_j ∪ P_j``, no conflict, every negated
  predicate of the claim in ``s_j`` (or, with ``P_j``, the sentence before it), and, for a
  claim judged with its question ``q`` (``Q`` below) and not question-anchored, its *answer
  words* ``A = T(c) − Q`` (comparative words aside: **Comparisons** checks them) stated in
  the sentence itself: ``|A ∩ (S_j ∪ (P_j ∩ R))| ≥ support·|A|`` when ``A`` is not empty,
  ``R`` the stems of the subject the claim extractor put in place of the answer's own
  pronoun (``AtomicClaim.resolved``; a pronoun meets a pronoun). Other words inherited
  through a pronoun of the context belong to its antecedent, not to what the answer adds:
  "James Best achieved fame." is not supported by "He first achieved fame as ... Luke
  Duke" after a sentence naming James Best.
  Words that echo the question say nothing the question did not; the words an answer adds
  are what it asserts. So "The Southern Railway runs from Vienna to Graz and the border
  with Slovenia at Spielfeld via a narrow gauge track." (HaluEval, hallucinated: 75% of its
  words, all from the question) is not supported by the sentence that lacks "narrow".
  And every *name of several words* of the claim (its first word aside) is found in order
  within one name of the sentence (``sentences.names_in_order``: a name is a run of
  capitalised words parted by spaces, quotes or "&", "of"-like links inside): "Richard
  Hawley" is within "Richard Willis Hawley", but "Panama City Air Force Base." (HaluEval,
  hallucinated) is not within "Tyndall Air Force Base is ... located 12 mi east of Panama
  City" although it holds every word.
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
``Q`` (the bridge entity; hyphenated names split) is among the chunk's stems; so does a
sentence ``b`` of the same chunk with ``covq(b) ≥ anchor`` (one document: "Mary Kathleen
Turner ... is an American film and stage actress and director." lends its words to "Turner
has won two Golden Globe Awards" for "... actress and director who has won how many Golden
Globe Awards?"), unless ``b`` holds a value of the claim's kind itself
(``anchoring.answers_itself``: a year for a year, a plain number for a plain number; then
``b`` answers the question, and "1777" from the next sentence does not); then ``covq(s_j)``
is taken over ``S_j ∪ B`` when that is higher. Bridges need the other chunks, so ``judge_pair`` has none; they depend on the set
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

**Both.** A claim with "both" ("both of" aside) says its predicate of each of two things:
the two it joins with "and", else the two its question joins with "and" (up to "both" or
"the") or offers with "or" (``comparisons.both_things``). It is supported only when, besides
the rules above, each thing holds in the judgment's sentences: some sentence names it (at
least half of the name stems only that thing has) and covers the claim's words outside the
things' names at ``cov ≥ support`` (``comparisons.each_holds``; like time order it reads
every chunk, never their order). So "Both are American authors." for "Alan Furst and Lee
Child are what?" is unsupported when Lee Child is "a British author".

**Spread.** A claim that no sentence supports and none contradicts may be supported by
several sentences of one chunk together (a ground truth stated over two sentences): the
group is ``sentences.spread`` — greedily, the sentence covering most of the claim's words
and numbers, then up to ``SPREAD`` = 3 sentences each adding some not yet covered (linear
in the chunk's sentences) — and it supports when, read over the group, ``cov`` of the union
(``set_coverage``) ``≥ support``, every claim name is among its stems, every claim number
and date is matched in its joined text, no sentence of it gives a shared predicate the
opposite polarity, the polarity, name-order, comparison, "both" and answer-word rules hold
over its sentences. Question-anchored claims are judged one sentence at a time.

**Graded support** (``Verdict.support``, read by ``metrics.judged.support_score``, so that
a score can rank claims rather than only count verdicts): for a supported cell
``0.9 + 0.1·cov`` (the deciding sentence's or group's ``cov``: a claim stated word for word
ranks above one whose words are three quarters there), 0 for a contradicted one, and for
an unsupported one ``UNSUPPORTED_GRADE``·max(best ``cov``, ``set_coverage`` of its spread
group) with ``UNSUPPORTED_GRADE`` = 0.9, so no higher than any supported cell. That is the
*rule grade*; from version 6 the cell's ``support`` is ``detectors.grading``'s logistic
combination of it with the claim's word overlap with the whole context, a contradiction
penalty, and whether the context holds the claim's names and values (``graded=False``: the
rule grade, contradicted cells 0, as in version 5).

``score`` is the deciding sentence's ``cov``. Names are compared as stems, so a name missing
from the chunk makes a claim unsupported, never contradicted: "We ship to Brazil" against
"We ship to Canada" is not a contradiction (both can be true). Paraphrase beyond the
synonym table defeats it: it is a lexical judge.

The offline **relevance** of a statement to a question (``OfflineJudge.relevance``, used by
contextual relevancy) is the extractive generator's idf-weighted support
(``probeguard.nlp.support.support_scores``, no number bonus) ``≥ relevance`` (default 0.35, its ``min_support``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from probeguard.core.hashing import digest
from probeguard.core.pipeline import Context
from probeguard.detectors.anchoring import (
    anchored_coverage,
    answers_itself,
    find_bridges,
    needs_anchor,
    question_words,
)
from probeguard.detectors.claims import AtomicClaim, is_bare
from probeguard.detectors.comparisons import (
    alternatives,
    both_things,
    comparatives,
    each_holds,
    time_order,
    word_stems,
)
from probeguard.detectors.grading import claim_context, grade_model, regrade
from probeguard.detectors.judges import Judgment, Relevance, Verdict, as_contexts, claim_texts
from probeguard.detectors.polarity import may_support, polarity_agrees, read_polarity
from probeguard.detectors.sentences import (
    Sentence,
    best_sentence,
    chunk_sentences,
    claim_names,
    claim_terms,
    coverage,
    names_in_order,
    set_coverage,
    spread,
    value_words,
)
from probeguard.detectors.spread import (
    UNSUPPORTED_GRADE,
    group_supports,
    group_verdict,
    supported_grade,
)
from probeguard.detectors.value_checks import claim_numbers, date_check, number_check
from probeguard.nlp.mentions import (
    date_mentions,
)
from probeguard.nlp.support import support_scores

__all__ = ["UNSUPPORTED_GRADE", "OfflineJudge", "best_sentence"]


@lru_cache(maxsize=64)
def _fingerprint(config: tuple[tuple[str, Any], ...]) -> str:
    return digest(dict(config))[:16]


class OfflineJudge:
    """Lexical entailment judge aware of numbers, dates, names and negation (rules in the
    module docstring). ``support``: least ``cov`` to support; ``about``: least ``cov`` for a
    sentence to be about the claim (and so able to contradict it); ``relevance``: least
    idf-weighted support for a statement to be relevant to a question."""

    name = "offline"
    version = 6
    """Bumped when a rule changes verdicts. 2: years, ordinals, decades and numbers in
    brackets read alike in claim and context; dotted abbreviations one name; polarity read
    per predicate (module docstring), no longer from any negation cue in the clause that
    holds most of the claim's words. 3: a comparative claim needs
    the comparison stated or, for time, the dates in the right order (module docstring).
    4: a claim judged with its question needs its answer words (those not in the question)
    stated in the sentence; a "both" claim must hold of each thing; a claim's names of
    several words are found, in order, within one name of the sentence; a value answer is
    anchored by the sentences of its own chunk too. 5: up to ``SPREAD`` sentences of one chunk
    support a claim together (**Spread**); every cell carries a graded ``support``; synonyms
    and irregular pasts count in ``cov``. 6: the graded ``support`` is
    ``detectors.grading``'s logistic combination (verdicts unchanged)."""

    accepts_question = True
    """``judge`` reads the question (question-anchored bare claims, module docstring)."""

    def __init__(
        self,
        support: float = 0.75,
        about: float = 0.5,
        relevance: float = 0.35,
        anchor: float = 0.25,
        graded: bool = True,
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
        self.graded = graded  # False: the rule grade (``benchmarks/fit_support_grade.py``)

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "support": self.support,
            "about": self.about,
            "relevance": self.relevance_threshold,
            "anchor": self.anchor,
            "grade": grade_model().fingerprint() if self.graded else "rule",
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
        sentences = [chunk_sentences(c.text) for c in ctxs]
        q = question_words(question)
        bridges = (
            find_bridges(q, sentences, self.anchor)
            if q and any(is_bare(t) for t in texts)
            else [[] for _ in ctxs]
        )
        every = [s for chunk in sentences for s in chunk]
        alts = alternatives(question)
        borrowed = {
            c.text: claim_terms(c.resolved)
            for c in claims
            if isinstance(c, AtomicClaim) and c.resolved
        }
        # a claim text given twice (an answer that restates its reference) is one row, judged once
        row_of: dict[str, tuple[Verdict, ...]] = {}
        for t in texts:
            if t not in row_of:
                each = self._each(t, question, every)
                row = tuple(
                    self._cell(t, c, s, q, b, every, alts, each, borrowed.get(t, frozenset()))
                    for c, s, b in zip(ctxs, sentences, bridges)
                )
                row_of[t] = self._grade(t, row, [c.text for c in ctxs])
        rows = tuple(row_of[t] for t in texts)
        return Judgment(texts, ctxs, rows, self.name, {"fingerprint": self.fingerprint()})

    def judge_pair(
        self, claim: str, context: Context | str, *, question: str | None = None
    ) -> Verdict:
        """One cell."""
        ctx = as_contexts([context])[0]
        sentences = chunk_sentences(ctx.text)
        cell = self._cell(
            claim,
            ctx,
            sentences,
            question_words(question),
            every=sentences,
            alts=alternatives(question),
            each=self._each(claim, question, sentences),
        )
        return self._grade(claim, (cell,), [ctx.text])[0]

    def _grade(
        self,
        claim: str,
        row: tuple[Verdict, ...],
        texts: Sequence[str],
    ) -> tuple[Verdict, ...]:
        """The row with each cell's graded support (``detectors.grading``), or as it is when
        not ``graded``."""
        if not self.graded:
            return row
        info = claim_context(claim, texts)
        model = grade_model()
        return tuple(regrade(v, info, model) for v in row)

    def _each(self, claim: str, question: str | None, every: Sequence[Sentence]) -> bool:
        """A "both" claim holds of each of its things in ``every`` (module docstring); True
        for any other claim."""
        things = both_things(claim, question)
        return not things or each_holds(claim_terms(claim), things, every, self.support)

    def _cell(
        self,
        claim: str,
        ctx: Context,
        sentences: Sequence[Sentence],
        q: frozenset[str] = frozenset(),
        bridges: Sequence[Sentence] = (),
        every: Sequence[Sentence] = (),
        alts: Sequence[frozenset[str]] = (),
        each: bool = True,
        borrowed: frozenset[str] = frozenset(),
    ) -> Verdict:
        terms = claim_terms(claim)
        compared, order = comparatives(claim)
        ordered = time_order(claim, order, list(alts), every) if compared else None
        anchor = q if q and needs_anchor(claim, terms) else None
        new = terms - q - compared if q and anchor is None else frozenset()
        if not terms and not claim_numbers(claim) and not date_mentions(claim):
            return Verdict(
                "unscored",
                chunk_id=ctx.chunk_id,
                reason="the claim has no content words, numbers or dates",
            )
        names = claim_names(claim)
        lent = [b for b in bridges if b not in sentences or not answers_itself(claim, b.text)]
        polarity = read_polarity(claim)
        best: tuple[float, Sentence] | None = None
        supported: tuple[float, Sentence] | None = None
        conflict: tuple[float, Sentence, str] | None = None
        for i, s in enumerate(sentences):
            own = coverage(terms, s) if terms else 1.0
            if anchor is None:
                cov, about_q = own, True
            else:  # a bare claim: the sentence must also be about its question
                covq = anchored_coverage(anchor, s, lent)
                cov, about_q = min(own, covq), covq >= self.anchor
            if best is None or cov > best[0]:
                best = (cov, s)
            if own < self.about or not about_q:
                continue
            names_ok = names <= (s.own | s.inherited)
            n_ok, n_conf = number_check(claim, s.text)
            d_ok, d_conf = date_check(claim, s.text)
            conf = (n_conf + d_conf) if names_ok else []
            p_ok = True
            if own >= self.support and names_ok:
                texts = [s.text]
                agrees = polarity_agrees(polarity, s.text)
                if s.inherited and i > 0:  # "It is not ...": the antecedent's predicates
                    texts.append(sentences[i - 1].text)
                    before = polarity_agrees(polarity, texts[1])
                    agrees = before if agrees is None or before is False else agrees
                if agrees is False:
                    conf.append("the context states the opposite polarity")
                p_ok = may_support(polarity, claim, texts) and names_in_order(claim, texts)
                if ordered is False:
                    conf.append("the context's dates put the compared things the other way")
                elif compared and ordered is None:
                    p_ok = p_ok and compared <= word_stems(texts)
            said = s.own | (s.inherited & borrowed)
            p_ok = p_ok and each and (not new or len(new & said) >= self.support * len(new))
            if conf:
                if conflict is None or cov > conflict[0]:
                    conflict = (cov, s, "; ".join(conf))
            elif own >= self.support and names_ok and n_ok and d_ok and p_ok:
                if supported is None or cov > supported[0]:
                    supported = (cov, s)
        group = (
            spread(terms | value_words(claim), sentences)
            if anchor is None and supported is None
            else ()
        )
        if conflict is None and len(group) > 1:
            rules = (compared, ordered, new, borrowed, each)
            if group_supports(claim, terms, group, self.support, rules):
                return group_verdict(terms, ctx, group)
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
                support=supported_grade(cov),
            )
        if conflict is not None:
            cov, s, why = conflict
            return Verdict(
                "contradicted",
                round(cov, 4),
                ctx.chunk_id,
                s.text,
                (s.start, s.end),
                why,
                support=0.0,
            )
        if best is None:
            return Verdict(
                "unsupported", 0.0, ctx.chunk_id, reason="the chunk is empty", support=0.0
            )
        cov, s = best
        graded = UNSUPPORTED_GRADE * max(cov, set_coverage(terms, group))
        return Verdict(
            "unsupported",
            round(cov, 4),
            ctx.chunk_id,
            s.text,
            (s.start, s.end),
            f"the closest sentence holds {cov:.0%} of the claim's words"
            + ("" if anchor is None else " and its question's words")
            + ("" if cov < self.support else " but not all its numbers, dates and names"),
            support=round(graded, 4),
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

"""Judged RAG metrics: pure functions over claim×chunk judgments and relevance verdicts
(``probeguard.detectors.judges``), computed once per record and shared, as in RAGChecker.

Each returns a ``MetricResult``: ``value`` in [0, 1], or NaN with a ``reason`` when there is
nothing to score (undefined is not zero); ``n`` is how many items were scored and
``unscored`` how many the judge could not decide (left out of the denominator, never counted
as failures).

* ``faithfulness`` — supported answer claims / scored answer claims (RAGAS faithfulness,
  Es et al. 2024; RAGChecker's claim-level precision), with per claim the verdict, the
  supporting chunk, and for an unsupported claim what the context actually says.
* ``context_recall`` — ground-truth claims attributable to the retrieved contexts / scored
  ground-truth claims (RAGAS context recall; RAGChecker claim recall).
* ``context_precision`` — rank-aware average precision over the retrieved list (RAGAS
  context precision@K).
* ``contextual_relevancy`` — relevant statements / scored statements of the retrieved chunks
  (DeepEval contextual relevancy).
* ``answer_relevancy`` (judged) and ``answer_relevancy_offline`` (no model: does the answer
  give what the question's type asks for — a date for "when", a number for "how many", a
  name for "who" — on topic, without hedging or drifting).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from probeguard.detectors.claims import AtomicClaim, is_bare, is_hedge
from probeguard.detectors.judges import Judgment, Relevance
from probeguard.detectors.offline_judge import best_sentence
from probeguard.nlp.mentions import date_mentions, number_mentions
from probeguard.nlp.stemming import stem
from probeguard.nlp.support import question_terms
from probeguard.nlp.text import STOPWORDS, content_words, split_sentences, words

__all__ = [
    "ClaimFinding",
    "FaithfulnessResult",
    "MetricResult",
    "answer_relevancy",
    "answer_relevancy_offline",
    "answer_type",
    "context_precision",
    "context_recall",
    "context_statements",
    "contextual_relevancy",
    "faithfulness",
    "relevance_from_gold",
    "relevance_from_judgment",
]

NAN = float("nan")


@dataclass(frozen=True)
class MetricResult:
    """A metric value (NaN when undefined, with the reason) and how many items it scored."""

    value: float
    n: int
    unscored: int = 0
    reason: str = ""
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def defined(self) -> bool:
        return not math.isnan(self.value)

    def as_dict(self) -> dict[str, Any]:
        return {
            "value": None if math.isnan(self.value) else self.value,
            "n": self.n,
            "unscored": self.unscored,
            "reason": self.reason,
            "detail": self.detail,
        }


def _share(hits: int, n: int, unscored: int, empty: str, **detail: Any) -> MetricResult:
    if n == 0:
        return MetricResult(
            NAN, 0, unscored, empty if not unscored else f"{empty}; {unscored} unscored", detail
        )
    return MetricResult(hits / n, n, unscored, "", detail)


# -- faithfulness ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ClaimFinding:
    """One answer claim's verdict and what the context says about it."""

    claim: str
    label: str
    supporting_chunk_id: str | None = None
    supporting_evidence: str = ""
    contradicting_chunk_id: str | None = None
    contradicting_sentence: str = ""
    best_chunk_id: str | None = None
    """For a claim that is not supported: the chunk closest to it (highest score)."""
    context_says: str = ""
    """For a claim that is not supported: the best-matching sentence of that chunk (the
    contradicting sentence when contradicted)."""
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class FaithfulnessResult(MetricResult):
    findings: tuple[ClaimFinding, ...] = ()

    @property
    def unsupported(self) -> list[ClaimFinding]:
        """Findings for claims that are contradicted or unsupported."""
        return [f for f in self.findings if f.label in ("contradicted", "unsupported")]

    def as_dict(self) -> dict[str, Any]:
        return {**super().as_dict(), "claims": [f.as_dict() for f in self.findings]}


def _finding(j: Judgment, i: int) -> ClaimFinding:
    claim, label = j.claims[i], j.claim_label(i)
    if label == "supported":
        col, v = j.best(i, "supported")  # type: ignore[misc]
        return ClaimFinding(claim, label, j.contexts[col].chunk_id, v.evidence, reason=v.reason)
    if label == "contradicted":
        col, v = j.best(i, "contradicted")  # type: ignore[misc]
        sentence = v.evidence or best_sentence(claim, j.contexts[col].text)[0]
        return ClaimFinding(
            claim,
            label,
            contradicting_chunk_id=j.contexts[col].chunk_id,
            contradicting_sentence=sentence,
            best_chunk_id=j.contexts[col].chunk_id,
            context_says=sentence,
            reason=v.reason,
        )
    if label == "unscored" or not j.contexts:
        reasons = sorted({v.reason for v in j.verdicts[i] if v.label == "unscored"})
        return ClaimFinding(claim, label, reason="; ".join(reasons) or "no contexts")
    found = j.best(i, "unsupported")
    col, v = found if found else (0, j.verdicts[i][0])
    if v.evidence:
        says = v.evidence
    else:  # the judge quoted nothing (an LLM): the lexically closest sentence of any chunk
        col, (says, _, _) = max(
            enumerate(best_sentence(claim, c.text) for c in j.contexts),
            key=lambda x: (x[1][2], -x[0]),
        )
    return ClaimFinding(
        claim,
        label,
        best_chunk_id=j.contexts[col].chunk_id,
        context_says=says,
        reason=j.verdicts[i][col].reason,
    )


def faithfulness(judgment: Judgment) -> FaithfulnessResult:
    """Share of the answer's claims the retrieved contexts support::

        F = |{c : label(c) = supported}| / |{c : label(c) ≠ unscored}|

    over the rows of ``judgment`` (judge the answer's *factual* claims: hedges claim
    nothing), ``label`` aggregated over chunks (``Judgment.claim_label``). Source: RAGAS
    faithfulness (Es et al. 2024, "RAGAS: Automated Evaluation of Retrieval Augmented
    Generation"); RAGChecker precision (Ru et al. 2024). NaN when no claim was scored (an
    empty answer or a pure refusal has nothing to be faithful about). Each finding keeps the
    supporting chunk id, and for the rest the chunk and sentence closest to the claim (the
    contradicting one when contradicted): the judge's evidence when it gives one, else the
    sentence of highest word coverage (``best_sentence``) over the chunks."""
    findings = tuple(_finding(judgment, i) for i in range(len(judgment.claims)))
    supported = sum(f.label == "supported" for f in findings)
    unscored = sum(f.label == "unscored" for f in findings)
    n = len(findings) - unscored
    base = _share(
        supported,
        n,
        unscored,
        "the answer makes no factual claim" if not findings else "no claim could be judged",
        judge=judgment.judge,
        labels={
            lab: sum(f.label == lab for f in findings)
            for lab in ("supported", "contradicted", "unsupported", "unscored")
        },
    )
    return FaithfulnessResult(base.value, base.n, base.unscored, base.reason, base.detail, findings)


# -- context recall -----------------------------------------------------------------------------
def context_recall(ground_truth: Judgment) -> MetricResult:
    """Share of the ground-truth answer's claims attributable to the retrieved contexts::

        R = |{g : label(g) = supported}| / |{g : label(g) ≠ unscored}|

    where ``ground_truth`` judges the reference answer's claims against the retrieved
    chunks. Source: RAGAS context recall (Es et al. 2024); RAGChecker claim recall (Ru et al.
    2024). NaN when there is no ground-truth claim (no reference: nothing to recall)."""
    labels = ground_truth.claim_labels()
    unscored = labels.count("unscored")
    missing = [
        c for c, lab in zip(ground_truth.claims, labels) if lab not in ("supported", "unscored")
    ]
    return _share(
        labels.count("supported"),
        len(labels) - unscored,
        unscored,
        "no ground-truth claim" if not labels else "no ground-truth claim was judged",
        missing=missing,
    )


# -- context precision -----------------------------------------------------------------------
def context_precision(relevance: Sequence[bool | None]) -> MetricResult:
    """Rank-aware precision of the retrieved list (average precision over its ranks)::

        CP@K = Σ_{k=1..K} precision@k · v_k  /  Σ_k v_k,    precision@k = Σ_{i≤k} v_i / k

    with ``v_k`` ∈ {0, 1} the relevance of the chunk at rank k (RAGAS context precision@K;
    Manning et al. 2008, ch. 8, average precision restricted to the retrieved list). Relevant
    chunks at the top score 1; the same chunks lower down score less. ``relevance`` comes
    from reference labels, gold evidence ids (``relevance_from_gold``) or, without a
    reference, a judge (``relevance_from_judgment``). NaN when nothing was retrieved, or when
    a chunk's relevance is unknown (``None``: the precision would depend on it); 0.0 when
    chunks were retrieved and none is relevant."""
    flags = list(relevance)
    if not flags:
        return MetricResult(NAN, 0, 0, "nothing was retrieved")
    unknown = [k + 1 for k, v in enumerate(flags) if v is None]
    if unknown:
        return MetricResult(
            NAN, 0, len(unknown), f"relevance unknown at rank(s) {', '.join(map(str, unknown))}"
        )
    hits, total = 0, 0.0
    for k, v in enumerate(flags, start=1):
        if v:
            hits += 1
            total += hits / k
    if hits == 0:
        return MetricResult(
            0.0, len(flags), 0, "no retrieved chunk is relevant", {"relevant_ranks": []}
        )
    return MetricResult(
        total / hits,
        len(flags),
        0,
        "",
        {"relevant_ranks": [k + 1 for k, v in enumerate(flags) if v]},
    )


def relevance_from_gold(
    retrieved_ids: Sequence[str | Sequence[str]], gold: Collection[str]
) -> list[bool]:
    """Rank k is relevant when its id — or any of its ids, e.g. ``(chunk_id, doc_id)`` — is
    in ``gold`` (gold evidence chunk or document ids)."""
    gold = set(gold)
    return [bool(({r} if isinstance(r, str) else set(r)) & gold) for r in retrieved_ids]


def relevance_from_judgment(judgment: Judgment) -> list[bool | None]:
    """Without a reference: a chunk is relevant when it supports at least one claim of the
    judged text (the answer, or the ground truth when there is one; RAGAS's reference-free
    "context utilization"); None when it supports none and some cell is unscored."""
    return [judgment.chunk_relevant(j) for j in range(len(judgment.contexts))]


# -- contextual relevancy ---------------------------------------------------------------------
def context_statements(texts: Sequence[str]) -> list[list[str]]:
    """The statements (sentences) of each retrieved chunk, the unit contextual relevancy
    counts."""
    return [split_sentences(t) for t in texts]


def contextual_relevancy(verdicts: Sequence[Sequence[Relevance]]) -> MetricResult:
    """Share of the retrieved chunks' statements relevant to the question::

        CR = |{s : relevant(s)}| / |{s : relevant(s) is not None}|

    over the statements of every retrieved chunk (``verdicts[k]`` for the chunk at rank
    k+1). A bloated chunk — one relevant sentence among ten — lowers it. Source: DeepEval
    contextual relevancy (relevant statements / total statements). ``detail["per_chunk"]``
    holds each chunk's share (None when it has no scored statement). NaN when no statement
    was scored."""
    per_chunk: list[float | None] = []
    hits = n = unscored = 0
    for chunk in verdicts:
        scored = [v.relevant for v in chunk if v.relevant is not None]
        unscored += len(chunk) - len(scored)
        hits += sum(scored)
        n += len(scored)
        per_chunk.append(sum(scored) / len(scored) if scored else None)
    reasons = sorted({v.reason for c in verdicts for v in c if v.relevant is None})
    empty = (
        "no retrieved statement"
        if not any(verdicts)
        else "no statement was judged" + (f" ({'; '.join(reasons)})" if reasons else "")
    )
    return _share(hits, n, unscored, empty, per_chunk=per_chunk)


# -- answer relevancy --------------------------------------------------------------------------
def answer_relevancy(claims: Sequence[AtomicClaim], verdicts: Sequence[Relevance]) -> MetricResult:
    """Share of the answer's claims relevant to the question, hedges counted as irrelevant::

        AR = |{c : ¬hedge(c) ∧ relevant(c)}| / |{c : relevant(c) is not None or hedge(c)}|

    with ``verdicts[i]`` a relevance judge's verdict on ``claims[i]`` (an LLM judge, or
    ``OfflineJudge.relevance``). Source: DeepEval answer relevancy (relevant statements /
    total statements), except that refusals and disclaimers count against the answer, as
    RAGAS's answer relevancy does for non-committal answers. NaN when no claim was scored;
    0.0 for an empty answer (it addresses nothing)."""
    if len(claims) != len(verdicts):
        raise ValueError(f"one verdict per claim: {len(claims)} claims, {len(verdicts)} verdicts")
    if not claims:
        return MetricResult(0.0, 0, 0, "empty answer")
    hits = n = unscored = 0
    for c, v in zip(claims, verdicts):
        if c.hedge:
            n += 1
        elif v.relevant is None:
            unscored += 1
        else:
            n += 1
            hits += v.relevant
    return _share(hits, n, unscored, "no claim was judged", hedges=sum(c.hedge for c in claims))


def _stems(text: str) -> set[str]:
    return {stem(w) for w in content_words(text)}


AnswerType = Literal["yesno", "date", "quantity", "place", "person", "entity", "open"]

_AUX = frozenset(
    "is are was were am do does did can could has have had will would should shall may might "
    "must isn't aren't wasn't weren't doesn't don't didn't".split()
)
_TYPE_RULES: tuple[tuple[AnswerType, re.Pattern[str]], ...] = (
    (
        "date",
        re.compile(
            r"^(when\b|(in |on |by |since |until )?(what|which) (year|date|day|month|century|"
            r"decade|era|season)\b)|\b(what|which) (year|date|century|decade)\b|\bwhen (was|were|"
            r"did|does|is|will)\b"
        ),
    ),
    (
        "quantity",
        re.compile(
            r"\bhow (many|much|long|old|tall|far|big|large|high|heavy|fast|often|deep|wide)\b|"
            r"\b(what|which) (percentage|percent|number|amount|price|population|length|size|age|"
            r"distance|area|height|speed|rate|cost|total|proportion|share|fraction)\b"
        ),
    ),
    (
        "place",
        re.compile(
            r"^where\b|\bwhere (is|was|are|were|did|does|do)\b|\b(what|which|in what|in which) "
            r"(city|country|state|place|county|town|region|continent|location|nation|province|"
            r"island|village|area|district|neighborhood|neighbourhood)\b"
        ),
    ),
    ("person", re.compile(r"^(who|whom|whose)\b|\b(who|whom|whose)\b")),
    ("entity", re.compile(r"\b(what|which)\b")),
)
_EVASIVE = re.compile(
    r"\b(it depends|depends on (many|several|various|a number of)|hard to say|difficult to "
    r"(say|tell|know)|no (way|one) (to|can) (know|tell|say)|(many|various|several) (factors|"
    r"reasons|possibilities)|cannot be determined|not (specified|mentioned|stated|known)|"
    r"unclear|it varies|nobody knows)\b",
    re.IGNORECASE,
)
_YES_NO = re.compile(r"^\s*(yes|no|yeah|yep|nope|correct|incorrect|true|false)\b", re.IGNORECASE)
_YEARISH = re.compile(
    r"\b(\d{3,4}s?|\d{1,2}(st|nd|rd|th) century|january|february|march|april|may|june|july|"
    r"august|september|october|november|december|century|decade|bc|ad|bce|ce)\b",
    re.IGNORECASE,
)
_CAPITAL = re.compile(r"\b[A-Z][\w'’.-]*")


def answer_type(question: str) -> AnswerType:
    """What a direct answer to ``question`` is: ``yesno`` (opens with an auxiliary and offers
    no "or" choice), ``date`` (when / what year), ``quantity`` (how many / much / long /
    what percentage), ``place`` (where / which city), ``person`` (who / whom / whose),
    ``entity`` (what / which: a name or noun phrase), else ``open`` (why, how, requests)."""
    q = " ".join(question.lower().split())
    ws = words(q)
    if ws and ws[0] in _AUX and " or " not in q:
        return "yesno"
    for kind, pattern in _TYPE_RULES:
        if pattern.search(q):
            return kind
    return "open"


def _directness(
    kind: AnswerType, text: str, q: set[str], bare: bool, choice: bool = False
) -> float:
    """How directly one factual claim answers a question of type ``kind`` (formula in
    ``answer_relevancy_offline``)."""
    stems = _stems(text)
    new = stems - q
    on_topic = bool(stems & q)
    if not (on_topic or bare):
        return 0.0
    if kind == "yesno":
        if _YES_NO.match(text):
            return 1.0
        return 0.5 if on_topic else 0.0
    if kind == "date":
        typed = bool(date_mentions(text, any_year=True) or _YEARISH.search(text))
    elif kind == "quantity":
        typed = bool(number_mentions(text, skip_dates=False))
    elif kind in ("person", "place"):
        typed = any(
            stem(m.group(0).lower().strip(".")) not in q
            and m.group(0).lower().strip(".") not in STOPWORDS
            for m in _CAPITAL.finditer(text)
        )
    else:  # entity, open: a word the question does not hold
        typed = bool(new)
    if choice and bare and on_topic:  # "X or Y?" answered by naming one of them
        typed = True
    if typed:
        return 1.0
    return 0.5 if on_topic and new else 0.0


def answer_relevancy_offline(
    question: str,
    claims: Sequence[AtomicClaim],
    *,
    hedge_penalty: float = 0.5,
    drift_penalty: float = 0.5,
) -> MetricResult:
    """Answer relevancy without a model: does the answer *answer* the question? (use
    ``answer_relevancy`` with an LLM judge when paraphrase matters). With ``Q`` the question's
    stemmed content words (``question_terms``: fillers such as "many", "much" left out), its
    type ``t = answer_type(question)`` and, for each factual claim ``c`` (hedges, refusals
    and evasions such as "it depends on many factors" left out)::

        d(c) = 0                 c shares no word with Q and is not bare (off topic)
               1                 c holds an answer of type t: yesno → opens with yes/no;
                                 date → a date, year, month or century; quantity → a
                                 number; person/place → a capitalised name outside Q;
                                 entity/open → a content word outside Q; and
                                 for an "X or Y?" choice, a bare claim naming one
               0.5               c shares a word with Q and adds one, without the typed
                                 answer (talks about the question, answers it loosely)
               0                 otherwise (restates the question, or a bare claim of the
                                 wrong type: "Paris" for a "when" question)

        AR = max(0, max_c d(c)  −  α·h/n  −  β·u/n)      (α = hedge_penalty, β = drift_penalty)

    with ``h`` the hedge and evasive claims, ``u`` the off-topic factual claims and ``n``
    all claims. A *bare* claim (no verb-ish word, ``detectors.claims.is_bare``: "1774",
    "Denver Broncos") is a short answer and so on topic by construction: a correct terse
    answer of the right type scores 1, as RAGAS's answer relevancy (Es et al. 2024: how
    well the questions generated back from the answer match the asked one) scores a direct
    answer, and as DeepEval counts a relevant statement. It cannot tell a wrong answer of the
    right type from the right one (that is faithfulness and correctness). NaN when the
    question has no content word; 0.0 for an empty answer."""
    q = set(question_terms(question))
    if not q:
        return MetricResult(NAN, 0, 0, "the question has no content words")
    if not claims:
        return MetricResult(0.0, 0, 0, "empty answer")
    kind = answer_type(question)
    facts = [
        c for c in claims if not c.hedge and not is_hedge(c.text) and not _EVASIVE.search(c.text)
    ]
    hedges = len(claims) - len(facts)
    choice = " or " in f" {question.lower()} " and kind != "yesno"
    scores = [_directness(kind, c.text, q, is_bare(c.text), choice) for c in facts]
    drift = [c.text for c in facts if not (_stems(c.text) & q) and not is_bare(c.text)]
    direct = max(scores, default=0.0)
    n = len(claims)
    value = max(0.0, direct - hedge_penalty * hedges / n - drift_penalty * len(drift) / n)
    answer = set().union(*(_stems(c.text) for c in facts)) if facts else set()
    return MetricResult(
        value,
        n,
        0,
        "",
        {
            "answer_type": kind,
            "directness": direct,
            "coverage": len(q & answer) / len(q),
            "hedges": hedges,
            "drift": drift,
        },
    )

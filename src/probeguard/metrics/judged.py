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
* ``answer_relevancy`` (judged) and ``answer_relevancy_offline`` (a lexical heuristic).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from probeguard.detectors.claims import AtomicClaim, is_hedge
from probeguard.detectors.judges import Judgment, Relevance
from probeguard.detectors.offline_judge import best_sentence
from probeguard.nlp.stemming import stem
from probeguard.nlp.support import question_terms
from probeguard.nlp.text import content_words, split_sentences

__all__ = [
    "ClaimFinding",
    "FaithfulnessResult",
    "MetricResult",
    "answer_relevancy",
    "answer_relevancy_offline",
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


def answer_relevancy_offline(
    question: str,
    claims: Sequence[AtomicClaim],
    *,
    hedge_penalty: float = 0.5,
    drift_penalty: float = 0.5,
) -> MetricResult:
    """A lexical *heuristic* for answer relevancy (no model; use ``answer_relevancy`` with an
    LLM judge when paraphrase matters). With ``Q`` the question's stemmed content words,
    ``A`` those of the answer's factual claims, ``h`` the hedge claims (refusals,
    disclaimers), ``u`` the factual claims sharing no word with ``Q`` (drift) and ``n`` all
    claims::

        AR = max(0, |Q ∩ A| / |Q|  −  α·h/n  −  β·u/n)      (α = hedge_penalty, β = drift_penalty)

    ``Q`` drops the question fillers the extractive generator ignores ("many", "much", ...).
    It rewards answers that use the question's words, and penalises refusal/disclaimer
    sentences and off-topic claims. It cannot see a correct paraphrase ("send back" for
    "return") nor an on-topic wrong answer. NaN when the question has no content word;
    0.0 for an empty answer."""
    q = set(question_terms(question))
    if not q:
        return MetricResult(NAN, 0, 0, "the question has no content words")
    if not claims:
        return MetricResult(0.0, 0, 0, "empty answer")
    facts = [c for c in claims if not c.hedge and not is_hedge(c.text)]
    hedges = len(claims) - len(facts)
    answer = set().union(*(_stems(c.text) for c in facts)) if facts else set()
    drift = [c.text for c in facts if not (_stems(c.text) & q)]
    coverage = len(q & answer) / len(q)
    n = len(claims)
    value = max(0.0, coverage - hedge_penalty * hedges / n - drift_penalty * len(drift) / n)
    return MetricResult(value, n, 0, "", {"coverage": coverage, "hedges": hedges, "drift": drift})

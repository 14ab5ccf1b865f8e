"""Claim judges: every claim against every context chunk, once, as a claim×chunk matrix of
verdicts that all judged metrics share (the RAGChecker design: Ru et al. 2024, "RAGChecker:
A Fine-grained Framework for Diagnosing Retrieval-Augmented Generation").

A ``Verdict`` labels one (claim, chunk) cell ``supported`` (the chunk states the claim),
``contradicted`` (it states something incompatible), ``unsupported`` (neither) or
``unscored`` (the judge could not decide; the ``reason`` says why — never a silent 0).
A ``Judgment`` is the matrix plus its claims and contexts. A claim's label over all chunks::

    supported     if some chunk supports it
    contradicted  else, if some chunk contradicts it
    unscored      else, if some chunk is unscored (it might have supported it)
    unsupported   otherwise

Judges (one protocol, ``Judge``; each in its own module, re-exported here): ``OfflineJudge``
(``offline_judge``: lexical entailment aware of numbers, dates, names and negation, no model),
``NliJudge`` (``nli_judge``: an NLI cross-encoder, extra ``sentence-transformers``),
``LlmJudge`` (``llm_judge``: any OpenAI-compatible endpoint). Wrappers for bias
mitigation: ``PositionSwap`` (a second pass with the contexts in reversed order; cells whose
label changes are reported, and by default become ``unscored``) and ``Consensus`` (majority or
unanimous vote of several judges). ``agreement`` is the Wilson estimate of two judges' label
agreement.

**The question.** A short answer ("1774") is a claim only with its question. ``judge_claims``
hands the question to a judge whose ``accepts_question`` is true (the offline judge anchors
bare claims with the question's words; the wrappers pass it on), and to any other judge
(NLI, LLM, third-party ``Judge``s, whose protocol is unchanged) as text: each bare claim
(``detectors.claims.is_bare``) is judged as ``"<question> — <claim>"``, and the judgment
keeps the claims as given.
"""

from __future__ import annotations

import inspect
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Literal, Protocol, runtime_checkable

from probeguard.core.hashing import digest
from probeguard.core.pipeline import Context
from probeguard.detectors.claims import AtomicClaim, is_bare
from probeguard.stats import Estimate, wilson

__all__ = [
    "LABELS",
    "Consensus",
    "Judge",
    "Judgment",
    "Label",
    "PositionSwap",
    "Relevance",
    "RelevanceJudge",
    "Verdict",
    "agreement",
    "as_contexts",
    "claim_texts",
    "judge_claims",
]

Label = Literal["supported", "contradicted", "unsupported", "unscored"]
LABELS: tuple[str, ...] = ("supported", "contradicted", "unsupported", "unscored")
NAN = float("nan")


# -- values -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Verdict:
    """One (claim, chunk) cell."""

    label: Label
    score: float = NAN
    """The judge's confidence in ``label`` in [0, 1] (offline: coverage; NLI: probability;
    LLM: 1.0, it gives none); NaN when unscored."""
    chunk_id: str = ""
    evidence: str = ""
    """The chunk text that decided (a sentence or a quote); may be empty."""
    span: tuple[int, int] | None = None
    """Where ``evidence`` lies in the chunk's text, when known."""
    reason: str = ""
    retries: int = 0
    """Re-asks after malformed judge output (LLM judge)."""
    support: float = NAN
    """A graded support in [0, 1] that ranks cells (1 = supported; the offline judge's rule
    in its module docstring); NaN when the judge gives none (then ``label`` alone grades)."""

    @property
    def scored(self) -> bool:
        return self.label != "unscored"

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "score": None if math.isnan(self.score) else self.score,
            "chunk_id": self.chunk_id,
            "evidence": self.evidence,
            "span": list(self.span) if self.span else None,
            "reason": self.reason,
            "retries": self.retries,
        }


@dataclass(frozen=True)
class Relevance:
    """Is a statement relevant to a question? ``relevant`` is None when unscored."""

    relevant: bool | None
    score: float = NAN
    reason: str = ""


@dataclass(frozen=True)
class Judgment:
    """A claim×chunk matrix of verdicts: ``verdicts[i][j]`` judges ``claims[i]`` against
    ``contexts[j]`` (contexts in the order given, rank 1 first)."""

    claims: tuple[str, ...]
    contexts: tuple[Context, ...]
    verdicts: tuple[tuple[Verdict, ...], ...]
    judge: str
    """The judge's name (its ``fingerprint()`` is in ``detail``)."""
    detail: dict[str, Any] = field(default_factory=dict)
    parts: tuple[Judgment, ...] = ()
    """Wrappers keep the matrices they combined (swap: given order, reversed order realigned;
    consensus: one per judge)."""

    def __post_init__(self) -> None:
        if len(self.verdicts) != len(self.claims) or any(
            len(row) != len(self.contexts) for row in self.verdicts
        ):
            raise ValueError("a judgment needs one row per claim and one column per context")

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.claims), len(self.contexts)

    def labels(self) -> list[list[str]]:
        return [[v.label for v in row] for row in self.verdicts]

    def claim_label(self, i: int) -> Label:
        """Claim ``i`` over all chunks (rule in the module docstring)."""
        row = self.verdicts[i]
        for label in ("supported", "contradicted", "unscored"):
            if any(v.label == label for v in row):
                return label
        return "unsupported"

    def claim_labels(self) -> list[Label]:
        return [self.claim_label(i) for i in range(len(self.claims))]

    def best(self, i: int, label: str) -> tuple[int, Verdict] | None:
        """The column and verdict of claim ``i``'s highest-scoring cell with ``label``
        (ties: the earlier chunk), or None."""
        found = [(j, v) for j, v in enumerate(self.verdicts[i]) if v.label == label]
        if not found:
            return None
        return max(found, key=lambda jv: (0.0 if math.isnan(jv[1].score) else jv[1].score, -jv[0]))

    def chunk_relevant(self, j: int) -> bool | None:
        """Chunk ``j`` supports some claim (True); supports none and some cell is unscored
        (None: unknown); supports none (False)."""
        column = [row[j] for row in self.verdicts]
        if any(v.label == "supported" for v in column):
            return True
        if any(v.label == "unscored" for v in column):
            return None
        return False

    def as_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "claims": list(self.claims),
            "chunk_ids": [c.chunk_id for c in self.contexts],
            "verdicts": [[v.as_dict() for v in row] for row in self.verdicts],
            "detail": self.detail,
        }


def claim_texts(claims: Sequence[str | AtomicClaim]) -> tuple[str, ...]:
    """Claim texts from strings or ``AtomicClaim``s."""
    return tuple(c.text if isinstance(c, AtomicClaim) else str(c) for c in claims)


def as_contexts(contexts: Sequence[Context | str]) -> tuple[Context, ...]:
    """``Context``s as given; a plain string becomes ``Context("ctx-<rank>", text)``."""
    return tuple(
        c if isinstance(c, Context) else Context(f"ctx-{i + 1}", str(c))
        for i, c in enumerate(contexts)
    )


def _takes_question(judge: Judge) -> bool:
    """``judge.judge`` has a ``question`` parameter (a subclass may override it without).
    A method's answer is remembered per function (its signature cannot change)."""
    method = judge.judge
    func = getattr(method, "__func__", None)
    if func is not None and getattr(method, "__self__", None) is judge:
        return _func_takes_question(func)
    return _signature_takes_question(method)


@lru_cache(maxsize=256)
def _func_takes_question(func: Any) -> bool:
    return _signature_takes_question(func)


def _signature_takes_question(fn: Any) -> bool:
    try:
        return "question" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def judge_claims(
    judge: Judge,
    claims: Sequence[str | AtomicClaim],
    contexts: Sequence[Context | str],
    question: str | None = None,
) -> Judgment:
    """``judge.judge(claims, contexts)`` with the claims' question (module docstring): passed
    as ``question=`` when the judge ``accepts_question`` and its ``judge`` takes it, else written into each bare claim
    (``"<question> — <claim>"``); the judgment's claims are the ones given either way."""
    if not question or not question.strip():
        return judge.judge(claims, contexts)
    if getattr(judge, "accepts_question", False) and _takes_question(judge):
        return judge.judge(claims, contexts, question=question)  # type: ignore[call-arg]
    texts = claim_texts(claims)
    q = " ".join(question.split())
    anchored = [f"{q} — {t}" if is_bare(t) else t for t in texts]
    out = judge.judge(anchored, contexts)
    return replace(out, claims=texts)


# -- protocols ----------------------------------------------------------------------------
@runtime_checkable
class Judge(Protocol):
    """Judges claims × contexts into a ``Judgment``."""

    name: str

    def judge(
        self, claims: Sequence[str | AtomicClaim], contexts: Sequence[Context | str]
    ) -> Judgment: ...

    def fingerprint(self) -> str:
        """Cache key part: changes whenever the judge could judge differently."""
        ...


@runtime_checkable
class RelevanceJudge(Protocol):
    """Judges whether statements are relevant to a question."""

    def relevance(self, question: str, statements: Sequence[str]) -> list[Relevance]: ...


# -- bias mitigation ----------------------------------------------------------------------
class PositionSwap:
    """Judges twice: contexts as given, then reversed (columns realigned). A cell whose
    label differs between the passes is a *disagreement*, listed in
    ``detail["position_swap"]``; with ``on_disagreement="unscored"`` (default) it becomes
    ``unscored`` with both labels in the reason (the judge's answer depended on order, so it
    is not an answer), with ``"first"`` it keeps the given-order verdict. ``agreement`` there is
    the Wilson estimate of cells that agree, over cells both passes scored (Zheng et al. 2023,
    "Judging LLM-as-a-Judge", swap positions and count inconsistent verdicts)."""

    def __init__(
        self, judge: Judge, on_disagreement: Literal["unscored", "first"] = "unscored"
    ) -> None:
        if on_disagreement not in ("unscored", "first"):
            raise ValueError(
                f"on_disagreement must be 'unscored' or 'first', got {on_disagreement!r}"
            )
        self.inner = judge
        self.on_disagreement = on_disagreement
        self.name = f"swap({judge.name})"

    accepts_question = True
    """Passes the question on to the inner judge (``judge_claims``)."""

    def fingerprint(self) -> str:
        return digest({"swap": self.inner.fingerprint(), "on": self.on_disagreement})[:16]

    def judge(
        self,
        claims: Sequence[str | AtomicClaim],
        contexts: Sequence[Context | str],
        *,
        question: str | None = None,
    ) -> Judgment:
        ctxs = as_contexts(contexts)
        first = judge_claims(self.inner, claims, ctxs, question)
        second = judge_claims(self.inner, claims, ctxs[::-1], question)
        n = len(ctxs)
        realigned = tuple(tuple(row[n - 1 - j] for j in range(n)) for row in second.verdicts)
        second = Judgment(second.claims, ctxs, realigned, second.judge, second.detail)
        rows, disagreements, both = [], [], 0
        for i, (ra, rb) in enumerate(zip(first.verdicts, realigned)):
            row = []
            for j, (a, b) in enumerate(zip(ra, rb)):
                if a.scored and b.scored:
                    both += 1
                if a.label != b.label:
                    disagreements.append(
                        {
                            "claim": i,
                            "chunk_id": ctxs[j].chunk_id,
                            "given_order": a.label,
                            "reversed": b.label,
                        }
                    )
                    if self.on_disagreement == "unscored":
                        a = replace(
                            a,
                            label="unscored",
                            score=NAN,
                            reason=f"position bias: {a.label} with the contexts in the "
                            f"given order, {b.label} reversed",
                        )
                row.append(a)
            rows.append(tuple(row))
        scored_disagree = sum(
            1 for d in disagreements if "unscored" not in (d["given_order"], d["reversed"])
        )
        detail = {
            "fingerprint": self.fingerprint(),
            "position_swap": {
                "disagreements": disagreements,
                "agreement": wilson(both - scored_disagree, both).model_dump(),
            },
        }
        return Judgment(first.claims, ctxs, tuple(rows), self.name, detail, (first, second))


class Consensus:
    """Several judges vote per cell. ``majority``: the label more than half of *all* judges
    gave (an unscored vote counts against every label); ``unanimous``: the label every judge
    gave. No winner → ``unscored`` with the votes in the reason. A winning cell keeps the
    mean score of the judges that gave the label and the first one's evidence."""

    def __init__(
        self, judges: Sequence[Judge], rule: Literal["majority", "unanimous"] = "majority"
    ) -> None:
        if rule not in ("majority", "unanimous"):
            raise ValueError(f"rule must be 'majority' or 'unanimous', got {rule!r}")
        if len(judges) < 2:
            raise ValueError("a consensus needs at least two judges")
        self.judges = list(judges)
        self.rule = rule
        self.name = f"{rule}({','.join(j.name for j in self.judges)})"

    accepts_question = True
    """Passes the question on to each judge (``judge_claims``)."""

    def fingerprint(self) -> str:
        return digest({"rule": self.rule, "judges": [j.fingerprint() for j in self.judges]})[:16]

    def judge(
        self,
        claims: Sequence[str | AtomicClaim],
        contexts: Sequence[Context | str],
        *,
        question: str | None = None,
    ) -> Judgment:
        ctxs = as_contexts(contexts)
        parts = tuple(judge_claims(j, claims, ctxs, question) for j in self.judges)
        n_judges = len(parts)
        rows, split = [], 0
        for i in range(len(parts[0].claims)):
            row = []
            for j in range(len(ctxs)):
                votes = [p.verdicts[i][j] for p in parts]
                counts = Counter(v.label for v in votes if v.scored)
                need = n_judges if self.rule == "unanimous" else n_judges // 2 + 1
                winner = next((lab for lab, k in counts.most_common() if k >= need), None)
                if winner is None:
                    split += 1
                    tally = ", ".join(f"{p.judge}={v.label}" for p, v in zip(parts, votes))
                    row.append(
                        Verdict(
                            "unscored",
                            NAN,
                            ctxs[j].chunk_id,
                            reason=f"no {self.rule} verdict: {tally}",
                        )
                    )
                    continue
                agreeing = [v for v in votes if v.label == winner]
                scores = [v.score for v in agreeing if not math.isnan(v.score)]
                lead = next((v for v in agreeing if v.evidence), agreeing[0])
                row.append(
                    replace(
                        lead,
                        score=sum(scores) / len(scores) if scores else NAN,
                        reason=f"{len(agreeing)} of {n_judges} judges: {winner}"
                        + (f" ({lead.reason})" if lead.reason else ""),
                    )
                )
            rows.append(tuple(row))
        detail = {
            "fingerprint": self.fingerprint(),
            "consensus": {
                "rule": self.rule,
                "judges": [p.judge for p in parts],
                "no_verdict_cells": split,
            },
        }
        return Judgment(parts[0].claims, ctxs, tuple(rows), self.name, detail, parts)


# -- agreement ----------------------------------------------------------------------------
def agreement(
    a: Judgment | Sequence[Judgment],
    b: Judgment | Sequence[Judgment],
    *,
    level: Literal["cell", "claim"] = "cell",
) -> Estimate:
    """Wilson estimate of the share of pairs two judges label alike, over the pairs both
    scored::

        agreement = #{x : label_a(x) = label_b(x)} / #{x : both labels ≠ unscored}

    ``x`` ranges over (claim, chunk) cells (``level="cell"``) or over claims with their
    aggregated labels (``level="claim"``, the faithfulness view). Lists of judgments (one per
    record) are pooled. NaN with n=0 when no pair was scored by both."""
    aa = [a] if isinstance(a, Judgment) else list(a)
    bb = [b] if isinstance(b, Judgment) else list(b)
    if len(aa) != len(bb):
        raise ValueError(f"need as many judgments on each side, got {len(aa)} and {len(bb)}")
    same = n = 0
    for x, y in zip(aa, bb):
        if x.shape != y.shape:
            raise ValueError(f"judgments of different shapes: {x.shape} and {y.shape}")
        if level == "claim":
            pairs = list(zip(x.claim_labels(), y.claim_labels()))
        else:
            pairs = [
                (u.label, v.label) for ru, rv in zip(x.verdicts, y.verdicts) for u, v in zip(ru, rv)
            ]
        for u, v in pairs:
            if u != "unscored" and v != "unscored":
                n += 1
                same += u == v
    return wilson(same, n)

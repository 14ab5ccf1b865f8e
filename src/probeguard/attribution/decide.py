"""The decision table: which component caused a failure, from the outcomes of its swaps.

Each swap ends as ``repaired``, ``not_repaired``, ``not_applicable``, ``unsupported`` or
``error``. With ``O`` the oracle context's outcome and the *pre-generation* swaps taken in the
priority order **clean corpus → whole document → no re-ranker → better retrieval** (for an *abstain* case
only the clean corpus counts, see below), rows checked in this order:

| # | oracle ``O``              | other swaps                                  | cause            |
|---|---------------------------|----------------------------------------------|------------------|
| 12| any                       | the case carries an injected instruction and the hardened prompt repairs | prompt |
| 1 | repaired                  | a pre-generation swap repairs                | the first of corpus, chunker, retriever that repairs |
| 2 | repaired                  | none of those; hardened prompt repairs       | prompt           |
| 3 | repaired                  | nothing else; abstain case                   | generator (answers from irrelevant context: no refusal gate) |
| 4 | repaired                  | nothing else; gold evidence not retrieved    | retriever (observed) |
| 5 | repaired                  | nothing else; otherwise                      | undetermined     |
| 6 | not repaired              | hardened prompt repairs                      | prompt           |
| 7 | not repaired              | a pre-generation swap repairs                | that component (first by priority) |
| 8 | not repaired              | nothing repairs                              | generator        |
| 9 | N/A, unsupported or error | some swap repairs                            | the first of corpus, chunker, retriever, prompt |
| 10| N/A, unsupported or error | nothing repairs; no swap could run at all    | from observation (below), else undetermined |
| 11| N/A, unsupported or error | nothing repairs; some swap ran               | undetermined     |

**Priority.** The clean corpus is the narrowest intervention (it removes only the documents
the case injected, a probe names, or that state the asked fact differently from the gold
evidence), so when it repairs, the content is the cause and chunking or retrieval changes
that also repair are mitigations; whole documents change only the chunking; turning the
re-ranker off changes only the order of the same retriever's hits; better retrieval changes
the most (mode, depth, expansion), so it comes last. ``also`` lists every
other swap that repaired, in swap order. A swap that errored is named in the reason; it never
repairs.

**Injected instructions (row 12).** When an injected document carries instruction-like text
(``Observed.injected_instruction``) and the hardened prompt (data marking, instruction
stripping) repairs, the generator followed instructions in retrieved text: the prompt is the
cause, even where removing the injected document (clean corpus) repairs too (``also``).

**Abstain cases.** An unanswerable question has no gold evidence that chunking or retrieval
could fail to deliver: when whole documents or better retrieval "repair" it, they only
happened to make the generator refuse. Those swaps are never the cause of an abstain case
(they stay in ``also``, with a note); the clean corpus is, since it removes only an
implicated (injected or probe-named) document.

**Contributing causes.** The primary cause is ``cause``; ``contributing`` adds
``(component, mechanism id)`` pairs that also bore on the failure without being the one to
fix first: when generation fails even with the gold evidence (rows 6, 8) and the gold
evidence was not retrieved either, the retriever contributes (``retrieval_miss``).

**The probe's own reading** (``adopt_probe_reading``): a probe whose targeted re-run shows
how its group failed (``Probe.failure_mechanism``: the unsplit evidence answers a fractured
question, an answer survives the removal of its evidence) names that mechanism; its component
becomes the cause, and a different component the table chose stays as contributing.

**Observation** (black-box pipelines, no swap possible): gold evidence known and absent from
the retrieved contexts ⇒ retriever; gold evidence retrieved (or an abstain case) and an answer
not supported by the retrieved contexts ⇒ generator; anything else ⇒ undetermined. The
verdict's ``basis`` says ``observed`` then, ``counterfactual`` otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from probeguard.attribution.swaps import SWAPS
from probeguard.core.mechanisms import component_of, describe

__all__ = [
    "CAUSES",
    "OUTCOMES",
    "PRE_GENERATION",
    "Decision",
    "Observed",
    "adopt_probe_reading",
    "decide",
]

CAUSES: tuple[str, ...] = ("retriever", "chunker", "corpus", "prompt", "generator", "undetermined")
OUTCOMES: tuple[str, ...] = ("repaired", "not_repaired", "not_applicable", "unsupported", "error")

PRE_GENERATION: tuple[tuple[str, str], ...] = (
    ("clean_corpus", "corpus"),
    ("whole_document", "chunker"),
    ("no_reranker", "retriever"),
    ("better_retrieval", "retriever"),
)
"""Pre-generation swaps and their components, in priority order."""

SWAP_CAUSE: dict[str, str] = {**dict(PRE_GENERATION), "hardened_prompt": "prompt"}


@dataclass(frozen=True)
class Observed:
    """What the failing output shows without any re-run (None: not known)."""

    abstain: bool = False
    """The case expects a refusal."""
    gold_retrieved: bool | None = None
    """Every gold evidence document is among the retrieved contexts (None: no gold evidence,
    or the pipeline does not report its contexts)."""
    answer_supported: bool | None = None
    """The answer's content words are found in the retrieved contexts (None: no contexts or
    an empty answer)."""
    injected_instruction: bool = False
    """A document the case injected carries instruction-like text (``nlp.attack_phrases``)."""


@dataclass(frozen=True)
class Decision:
    cause: str
    reason: str
    also: tuple[str, ...] = ()
    basis: str = "counterfactual"
    row: int = 0
    """The decision table's row (module docstring)."""
    notes: tuple[str, ...] = field(default=())
    contributing: tuple[tuple[str, str], ...] = ()
    """``(component, mechanism id)`` pairs that contributed (module docstring)."""


def _repaired(outcomes: Mapping[str, str], name: str) -> bool:
    return outcomes.get(name) == "repaired"


def _others(outcomes: Mapping[str, str], chosen: str | None) -> tuple[str, ...]:
    return tuple(
        s for s in SWAPS if s != chosen and s != "oracle_context" and _repaired(outcomes, s)
    )


def _errors(outcomes: Mapping[str, str]) -> tuple[str, ...]:
    return tuple(f"swap {s} errored" for s, o in outcomes.items() if o == "error")


ABSTAIN_CAUSES = frozenset({"corpus"})
"""Pre-generation components that can cause an abstain case's failure (module docstring)."""


def _first_pre(outcomes: Mapping[str, str], abstain: bool) -> tuple[str, str] | None:
    """The first repairing pre-generation swap that may be the cause, with its component."""
    return next(
        (
            (s, c)
            for s, c in PRE_GENERATION
            if _repaired(outcomes, s) and (not abstain or c in ABSTAIN_CAUSES)
        ),
        None,
    )


def _abstain_notes(outcomes: Mapping[str, str], abstain: bool) -> tuple[str, ...]:
    if not abstain:
        return ()
    return tuple(
        f"swap {s} makes the generator refuse this unanswerable question, but removes "
        f"nothing implicated: not a cause"
        for s, c in PRE_GENERATION
        if _repaired(outcomes, s) and c not in ABSTAIN_CAUSES
    )


def _contributing(cause: str, row: int, observed: Observed) -> tuple[tuple[str, str], ...]:
    """The retriever contributes when generation fails even with the gold evidence and the
    gold evidence was not retrieved either (module docstring)."""
    if row in (6, 8) and cause != "retriever" and observed.gold_retrieved is False:
        return (("retriever", "retrieval_miss"),)
    return ()


@dataclass(frozen=True)
class _Row:
    cause: str
    swap: str | None
    reason: str
    row: int
    basis: str = "counterfactual"


def decide(outcomes: Mapping[str, str], observed: Observed = Observed()) -> Decision:
    """The cause of one failure from its swaps' outcomes (table in the module docstring)."""
    bad = sorted(set(outcomes.values()) - set(OUTCOMES))
    if bad:
        raise ValueError(f"unknown swap outcomes {bad} (known: {', '.join(OUTCOMES)})")
    chosen = _choose(outcomes, observed)
    return Decision(
        chosen.cause,
        chosen.reason,
        _others(outcomes, chosen.swap),
        chosen.basis,
        chosen.row,
        _errors(outcomes) + _abstain_notes(outcomes, observed.abstain),
        _contributing(chosen.cause, chosen.row, observed),
    )


def _choose(outcomes: Mapping[str, str], observed: Observed) -> _Row:
    """The row that applies (module docstring), rows 12 then 1-11."""
    oracle = outcomes.get("oracle_context", "unsupported")
    prompt = _repaired(outcomes, "hardened_prompt")
    if prompt and observed.injected_instruction:
        return _Row(
            "prompt",
            "hardened_prompt",
            "an injected document carries instructions, and the hardened prompt (retrieved "
            "text marked as data, instructions stripped) repairs the case",
            12,
        )
    if oracle == "repaired":
        return _oracle_repaired(outcomes, observed)
    if oracle == "not_repaired":
        return _oracle_not_repaired(outcomes, observed)
    return _no_oracle(outcomes, observed, oracle)


def _oracle_repaired(outcomes: Mapping[str, str], observed: Observed) -> _Row:
    pre = _first_pre(outcomes, observed.abstain)
    if pre is not None:
        return _Row(
            pre[1],
            pre[0],
            f"the gold evidence alone repairs the case (the failure lies before generation) "
            f"and the {pre[0]} swap repairs it",
            1,
        )
    if _repaired(outcomes, "hardened_prompt"):
        return _Row(
            "prompt",
            "hardened_prompt",
            "the gold evidence alone repairs the case and, of the other swaps, only the "
            "hardened prompt does",
            2,
        )
    if observed.abstain:
        return _Row(
            "generator",
            None,
            "given no context the pipeline refuses, but given the retrieved (irrelevant) "
            "contexts it answers: no refusal gate holds it back",
            3,
        )
    if observed.gold_retrieved is False:
        return _Row(
            "retriever",
            None,
            "the gold evidence alone repairs the case, no single swap does, and the gold "
            "evidence was not retrieved",
            4,
        )
    return _Row(
        "undetermined",
        None,
        "the gold evidence alone repairs the case but no single component swap does "
        "(several components together, or distracting context)",
        5,
    )


def _oracle_not_repaired(outcomes: Mapping[str, str], observed: Observed) -> _Row:
    if _repaired(outcomes, "hardened_prompt"):
        return _Row(
            "prompt",
            "hardened_prompt",
            "the case fails even with the gold evidence, and the hardened prompt repairs it",
            6,
        )
    pre = _first_pre(outcomes, observed.abstain)
    if pre is not None:
        return _Row(
            pre[1],
            pre[0],
            f"the {pre[0]} swap repairs the case (the gold evidence alone does not)",
            7,
        )
    given = "no context at all" if observed.abstain else "the gold evidence"
    return _Row(
        "generator",
        None,
        f"the case fails even when the generator is handed {given}, and no other swap repairs it",
        8,
    )


_WHY = {
    "not_applicable": "has no gold evidence",
    "unsupported": "is not supported by the pipeline",
    "error": "errored",
}


def _no_oracle(outcomes: Mapping[str, str], observed: Observed, oracle: str) -> _Row:
    why = _WHY.get(oracle, oracle)
    pre = _first_pre(outcomes, observed.abstain)
    if pre is not None or _repaired(outcomes, "hardened_prompt"):
        swap, cause = pre if pre is not None else ("hardened_prompt", "prompt")
        return _Row(cause, swap, f"the {swap} swap repairs the case (the oracle context {why})", 9)
    if any(o in ("repaired", "not_repaired") for o in outcomes.values()):
        return _Row(
            "undetermined",
            None,
            f"no swap repairs the case and the oracle context {why}, so generation cannot "
            "be tested apart",
            11,
        )
    return _observed(observed, why)


def _observed(observed: Observed, why: str) -> _Row:
    """Row 10: no swap could run; the cause read from the outputs."""
    if observed.gold_retrieved is False:
        return _Row(
            "retriever",
            None,
            "observed: no swap could run, and the gold evidence is not among the retrieved "
            "contexts",
            10,
            "observed",
        )
    if (observed.gold_retrieved or observed.abstain) and observed.answer_supported is False:
        return _Row(
            "generator",
            None,
            "observed: no swap could run, and the answer is not supported by the retrieved "
            "contexts" + ("" if observed.abstain else ", though they hold the gold evidence"),
            10,
            "observed",
        )
    return _Row(
        "undetermined",
        None,
        f"no swap could run (the oracle context {why}) and the outputs alone do not single "
        "out a component",
        10,
        "observed",
    )


def adopt_probe_reading(
    decision: Decision, probe: str, mechanism: str, swaps_mechanism: str
) -> Decision:
    """The verdict when the failing probe names its own mechanism (``Probe.failure_mechanism``,
    read from the probe's targeted counterfactual, e.g. the unsplit evidence answering a
    fractured question): the cause becomes the mechanism's component, because the probe's
    re-run isolates it more narrowly than a generic swap; a different component the swaps
    pointed at stays as a contributing cause with ``swaps_mechanism`` (none when it was
    undetermined). A mechanism of the blamed component, or one that is not built in, changes
    nothing."""
    component = component_of(mechanism)
    if component in ("undetermined", decision.cause):
        return decision
    contributing = tuple(c for c in decision.contributing if c[0] != component)
    if decision.cause != "undetermined":
        contributing = ((decision.cause, swaps_mechanism), *contributing)
    reason = (
        f"the {probe} probe's own re-run shows how it failed ({describe(mechanism)}), which "
        f"names the {component}; the swaps alone said {decision.cause}: {decision.reason}"
    )
    return replace(decision, cause=component, reason=reason, contributing=contributing)

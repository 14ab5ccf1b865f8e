"""The decision table: which component caused a failure, from the outcomes of its swaps.

Each swap ends as ``repaired``, ``not_repaired``, ``not_applicable``, ``unsupported`` or
``error``. With ``O`` the oracle context's outcome and the *pre-generation* swaps taken in the
priority order **clean corpus → whole document → better retrieval**:

| # | oracle ``O``              | other swaps                                  | cause            |
|---|---------------------------|----------------------------------------------|------------------|
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
the case injected or that conflict with its gold evidence), so when it repairs, the content is
the cause and chunking or retrieval changes that also repair are mitigations; whole documents
change only the chunking; better retrieval changes the most (mode, depth, expansion), so it
comes last. ``also`` lists every other swap that repaired, in swap order. A swap that errored
is named in the reason; it never repairs.

**Observation** (black-box pipelines, no swap possible): gold evidence known and absent from
the retrieved contexts ⇒ retriever; gold evidence retrieved (or an abstain case) and an answer
not supported by the retrieved contexts ⇒ generator; anything else ⇒ undetermined. The
verdict's ``basis`` says ``observed`` then, ``counterfactual`` otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from probeguard.attribution.swaps import SWAPS

__all__ = ["CAUSES", "OUTCOMES", "PRE_GENERATION", "Decision", "Observed", "decide"]

CAUSES: tuple[str, ...] = ("retriever", "chunker", "corpus", "prompt", "generator", "undetermined")
OUTCOMES: tuple[str, ...] = ("repaired", "not_repaired", "not_applicable", "unsupported", "error")

PRE_GENERATION: tuple[tuple[str, str], ...] = (
    ("clean_corpus", "corpus"),
    ("whole_document", "chunker"),
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
    """A gold evidence document is among the retrieved contexts (None: no gold evidence, or
    the pipeline does not report its contexts)."""
    answer_supported: bool | None = None
    """The answer's content words are found in the retrieved contexts (None: no contexts or
    an empty answer)."""


@dataclass(frozen=True)
class Decision:
    cause: str
    reason: str
    also: tuple[str, ...] = ()
    basis: str = "counterfactual"
    row: int = 0
    """The decision table's row (module docstring)."""
    notes: tuple[str, ...] = field(default=())


def _repaired(outcomes: Mapping[str, str], name: str) -> bool:
    return outcomes.get(name) == "repaired"


def _others(outcomes: Mapping[str, str], chosen: str | None) -> tuple[str, ...]:
    return tuple(
        s for s in SWAPS if s != chosen and s != "oracle_context" and _repaired(outcomes, s)
    )


def _errors(outcomes: Mapping[str, str]) -> tuple[str, ...]:
    return tuple(f"swap {s} errored" for s, o in outcomes.items() if o == "error")


def decide(outcomes: Mapping[str, str], observed: Observed = Observed()) -> Decision:
    """The cause of one failure from its swaps' outcomes (table in the module docstring)."""
    bad = sorted(set(outcomes.values()) - set(OUTCOMES))
    if bad:
        raise ValueError(f"unknown swap outcomes {bad} (known: {', '.join(OUTCOMES)})")
    notes = _errors(outcomes)
    oracle = outcomes.get("oracle_context", "unsupported")
    pre = next(((s, c) for s, c in PRE_GENERATION if _repaired(outcomes, s)), None)
    prompt = _repaired(outcomes, "hardened_prompt")

    def made(
        cause: str, swap: str | None, reason: str, row: int, basis: str = "counterfactual"
    ) -> Decision:
        return Decision(cause, reason, _others(outcomes, swap), basis, row, notes)

    if oracle == "repaired":
        if pre is not None:
            return made(
                pre[1],
                pre[0],
                f"the gold evidence alone repairs the case (the failure "
                f"lies before generation) and the {pre[0]} swap repairs it",
                1,
            )
        if prompt:
            return made(
                "prompt",
                "hardened_prompt",
                "the gold evidence alone repairs the case "
                "and, of the other swaps, only the hardened prompt does",
                2,
            )
        if observed.abstain:
            return made(
                "generator",
                None,
                "given no context the pipeline refuses, but given "
                "the retrieved (irrelevant) contexts it answers: no refusal gate holds "
                "it back",
                3,
            )
        if observed.gold_retrieved is False:
            return made(
                "retriever",
                None,
                "the gold evidence alone repairs the case, no single "
                "swap does, and the gold evidence was not retrieved",
                4,
            )
        return made(
            "undetermined",
            None,
            "the gold evidence alone repairs the case but no "
            "single component swap does (several components together, or distracting "
            "context)",
            5,
        )
    if oracle == "not_repaired":
        if prompt:
            return made(
                "prompt",
                "hardened_prompt",
                "the case fails even with the gold evidence, and the hardened prompt repairs it",
                6,
            )
        if pre is not None:
            return made(
                pre[1],
                pre[0],
                f"the {pre[0]} swap repairs the case (the gold evidence alone does not)",
                7,
            )
        return made(
            "generator",
            None,
            "the case fails even when the generator is handed the "
            "gold evidence, and no other swap repairs it",
            8,
        )
    why = {
        "not_applicable": "has no gold evidence",
        "unsupported": "is not supported by the pipeline",
        "error": "errored",
    }.get(oracle, oracle)
    if pre is not None or prompt:
        swap, cause = pre if pre is not None else ("hardened_prompt", "prompt")
        return made(cause, swap, f"the {swap} swap repairs the case (the oracle context {why})", 9)
    ran = [s for s, o in outcomes.items() if o in ("repaired", "not_repaired")]
    if not ran:
        if observed.gold_retrieved is False:
            return made(
                "retriever",
                None,
                "observed: no swap could run, and the gold evidence "
                "is not among the retrieved contexts",
                10,
                "observed",
            )
        if (observed.gold_retrieved or observed.abstain) and observed.answer_supported is False:
            return made(
                "generator",
                None,
                "observed: no swap could run, and the answer is not "
                "supported by the retrieved contexts"
                + ("" if observed.abstain else ", though they hold the gold evidence"),
                10,
                "observed",
            )
        return made(
            "undetermined",
            None,
            "no swap could run (the oracle context "
            f"{why}) and the outputs alone do not single out a component",
            10,
            "observed",
        )
    return made(
        "undetermined",
        None,
        f"no swap repairs the case and the oracle context {why}, "
        "so generation cannot be tested apart",
        11,
    )

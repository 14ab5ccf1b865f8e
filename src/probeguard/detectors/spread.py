"""Support spread over several sentences of one chunk (``offline_judge`` module docstring,
**Spread**): the one-sentence rules of the offline judge read over a group of sentences."""

from __future__ import annotations

from collections.abc import Sequence

from probeguard.core.pipeline import Context
from probeguard.detectors.comparisons import word_stems
from probeguard.detectors.judges import Verdict
from probeguard.detectors.polarity import may_support, polarity_agrees, read_polarity
from probeguard.detectors.sentences import (
    Sentence,
    claim_names,
    names_in_order,
    set_coverage,
)
from probeguard.detectors.value_checks import date_check, number_check

__all__ = [
    "SUPPORTED_FLOOR",
    "UNSUPPORTED_GRADE",
    "group_supports",
    "group_verdict",
    "supported_grade",
]

SUPPORTED_FLOOR = 0.9
"""A supported cell's rule grade is ``SUPPORTED_FLOOR + (1 − SUPPORTED_FLOOR)·cov``
(``offline_judge`` module docstring, **Graded support**; ``detectors.grading`` combines it
with other features into the cell's graded support)."""
UNSUPPORTED_GRADE = 0.9
"""An unsupported cell's rule grade is this times its best coverage: no higher than a
supported cell's."""


def supported_grade(cov: float) -> float:
    """The rule grade of a supported cell whose deciding sentence(s) cover ``cov``."""
    return round(SUPPORTED_FLOOR + (1.0 - SUPPORTED_FLOOR) * min(cov, 1.0), 4)


def group_supports(
    claim: str,
    terms: frozenset[str],
    group: Sequence[Sentence],
    support: float,
    extra: tuple[frozenset[str], bool | None, frozenset[str], frozenset[str], bool],
) -> bool:
    """Several sentences of one chunk support the claim together (module docstring,
    **Spread**): the rules of one sentence, read over the group."""
    compared, ordered, new, borrowed, each = extra
    texts = [s.text for s in group]
    joined = " ".join(texts)
    own = frozenset().union(*(s.own for s in group))
    held = own | frozenset().union(*(s.inherited for s in group))
    polarity = read_polarity(claim)
    names = claim_names(claim)
    if set_coverage(terms, group) < support or not names <= held or not linked(names, group):
        return False
    if not (number_check(claim, joined)[0] and date_check(claim, joined)[0] and each):
        return False
    if any(polarity_agrees(polarity, t) is False for t in texts):
        return False
    if not (may_support(polarity, claim, texts) and names_in_order(claim, texts)):
        return False
    if compared and not (ordered or (ordered is None and compared <= word_stems(texts))):
        return False
    said = own | (held & borrowed)
    if new and len(new & said) < support * len(new):
        return False
    return not new or binds(frozenset(polarity.predicates), new, group)


def linked(names: frozenset[str], group: Sequence[Sentence]) -> bool:
    """Each sentence of ``group`` is about the same thing as another: it opens with a pronoun
    (it inherits the sentence before it) or shares a name of the claim with another sentence
    of the group. Always true for a claim without names. So "The population of Eastoft in
    2011 was 167,446." (HaluEval, hallucinated) is not supported by "Eastoft is a village
    ..." and "The population of the Unitary Authority at the 2011 census was 167,446."."""
    if not names:
        return True
    for k, s in enumerate(group):
        others = frozenset().union(*(t.own for i, t in enumerate(group) if i != k))
        if not s.inherited and not names & s.own & others:
            return False
    return True


def binds(predicates: frozenset[str], new: frozenset[str], group: Sequence[Sentence]) -> bool:
    """The answer's words are stated with the claim's predicate: the sentence of ``group``
    holding most of ``new`` (ties: the earlier) holds one of the claim's ``predicates``,
    when the group holds any. So "The ceremony was chaired by François Cluzet." (HaluEval,
    hallucinated) is not supported by "The ceremony was chaired by Isabelle Mergault."
    and a later sentence naming Cluzet."""
    held = predicates & frozenset().union(*(s.own | s.inherited for s in group))
    if not held:
        return True
    lead = max(group, key=lambda s: len(new & (s.own | s.inherited)))
    return bool(held & (lead.own | lead.inherited))


def group_verdict(terms: frozenset[str], ctx: Context, group: Sequence[Sentence]) -> Verdict:
    cov = set_coverage(terms, group)
    start, end = group[0].start, group[-1].end
    return Verdict(
        "supported",
        round(cov, 4),
        ctx.chunk_id,
        ctx.text[start:end],
        (start, end),
        f"{len(group)} sentences of the chunk together hold {cov:.0%} of the claim's "
        "words and its numbers, dates and names",
        support=supported_grade(cov),
    )

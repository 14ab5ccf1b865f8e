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

__all__ = ["group_supports", "group_verdict"]


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
    if set_coverage(terms, group) < support or not claim_names(claim) <= held:
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
    return not new or len(new & said) >= support * len(new)


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
        support=1.0,
    )

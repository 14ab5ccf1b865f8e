"""Evidence Coverage Score (ECS) and the silent-failure quadrant (pure functions).

**ECS** — the fraction of gold evidence paragraphs covered by the retrieved chunks. Tokens are
``probeguard.nlp.text.words`` (lower-cased word tokens; stopwords kept), counted as multisets: a
word that occurs m times in the paragraph and n times in a chunk contributes min(m, n). With
``tok(x)`` the token multiset of text x and θ the threshold (default 0.5),

    cov(p, c)   = |tok(p) ∩ tok(c)| / |tok(p)|         (multiset intersection)
    covered(p)  = max_c cov(p, c) ≥ θ                  (one chunk must hold it; no pooling)
    ECS         = |{p ∈ P : covered(p)}| / |P|

where P is the list of gold paragraphs that have at least one token, each counted once per
appearance in the list. A paragraph split across two chunks, neither holding θ of it, is
**not** covered: coverage is per chunk, because a generator reading one chunk sees only that
chunk's share. ECS is NaN when P is empty (no gold evidence: nothing to cover).

**Silent-failure quadrant** — answers that look grounded while their evidence was never
retrieved: faithfulness > 0.5 (the answer is supported by the retrieved contexts) while
ECS < 0.5 (most gold evidence is missing), i.e. a fluent, "faithful" answer built on the
wrong context. Reported two ways, each a Wilson 95% Estimate:

    share_of_all           = #{F > 0.5 ∧ ECS < 0.5} / #{scored answers}
    share_of_low_coverage  = #{F > 0.5 ∧ ECS < 0.5} / #{scored answers with ECS < 0.5}

An answer is scored when both its faithfulness and its ECS are numbers; a NaN in either makes
it unscored: excluded from both denominators and counted in ``unscored``. Faithfulness alone
cannot see this failure: it measures the answer against what was retrieved, not against what
should have been.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from probeguard.nlp.text import words
from probeguard.stats import Estimate, wilson

__all__ = [
    "DEFAULT_COVERAGE_THRESHOLD",
    "SilentFailure",
    "evidence_coverage_score",
    "paragraph_coverage",
    "silent_failure_quadrant",
]

DEFAULT_COVERAGE_THRESHOLD = 0.5
"""θ: a paragraph is covered when one chunk holds at least this share of its tokens."""

_EPS = 1e-12  # so that 2 of 4 tokens is covered at θ = 0.5 despite float rounding of θ·n


def _bag(text: str) -> Counter[str]:
    return Counter(words(text))


def _held(paragraph: str, bags: Sequence[Counter[str]]) -> tuple[int, int]:
    """(most paragraph tokens one chunk holds, paragraph token count)."""
    need = _bag(paragraph)
    best = max((sum((need & bag).values()) for bag in bags), default=0)
    return best, sum(need.values())


def paragraph_coverage(paragraph: str, chunks: Sequence[str]) -> float:
    """max over chunks of cov(p, c) (module doc); NaN when the paragraph has no tokens,
    0.0 when there are no chunks."""
    best, total = _held(paragraph, [_bag(c) for c in chunks])
    return best / total if total else float("nan")


def evidence_coverage_score(
    gold_paragraphs: Sequence[str],
    chunks: Sequence[str],
    *,
    threshold: float = DEFAULT_COVERAGE_THRESHOLD,
) -> float:
    """ECS of the retrieved ``chunks`` (texts) against ``gold_paragraphs`` (texts); formula in
    the module doc. NaN when no gold paragraph has a token."""
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    bags = [_bag(c) for c in chunks]
    covered = scored = 0
    for paragraph in gold_paragraphs:
        best, total = _held(paragraph, bags)
        if total == 0:
            continue
        scored += 1
        covered += int(best >= threshold * total - _EPS)
    return covered / scored if scored else float("nan")


@dataclass(frozen=True)
class SilentFailure:
    """The silent-failure quadrant over a set of answers (module doc)."""

    share_of_all: Estimate
    share_of_low_coverage: Estimate
    silent: int
    low_coverage: int
    scored: int
    unscored: int

    def summary(self) -> dict[str, Any]:
        """JSON-ready, with each Estimate as a dict."""
        return {
            "share_of_all": self.share_of_all.model_dump(),
            "share_of_low_coverage": self.share_of_low_coverage.model_dump(),
            "silent": self.silent,
            "low_coverage": self.low_coverage,
            "scored": self.scored,
            "unscored": self.unscored,
        }


def silent_failure_quadrant(
    faithfulness: Sequence[float],
    ecs: Sequence[float],
    *,
    faithfulness_above: float = 0.5,
    ecs_below: float = 0.5,
) -> SilentFailure:
    """Counts and Wilson Estimates of the quadrant faithfulness > ``faithfulness_above`` ∧
    ECS < ``ecs_below`` over per-answer arrays of equal length (NaN = unscored)."""
    f = np.asarray(faithfulness, dtype=float)
    e = np.asarray(ecs, dtype=float)
    if f.shape != e.shape or f.ndim != 1:
        raise ValueError(f"need two 1-d arrays of equal length, got {f.shape} and {e.shape}")
    ok = ~(np.isnan(f) | np.isnan(e))
    low = ok & (e < ecs_below)
    silent = low & (f > faithfulness_above)
    n_ok, n_low, n_silent = int(ok.sum()), int(low.sum()), int(silent.sum())
    return SilentFailure(
        share_of_all=wilson(n_silent, n_ok),
        share_of_low_coverage=wilson(n_silent, n_low),
        silent=n_silent,
        low_coverage=n_low,
        scored=n_ok,
        unscored=int(f.size - n_ok),
    )

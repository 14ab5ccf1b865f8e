"""Answer metrics against gold answers: ROUGE-L, and the standard-evaluation failure rule.

ROUGE-L (Lin 2004, "ROUGE: A Package for Automatic Evaluation of Summaries", §3.1): with
X the reference tokens (length m), Y the candidate tokens (length n) and LCS their longest
common subsequence,

    R = LCS / m,   P = LCS / n,   F = (1 + β²)·R·P / (R + β²·P)   (β = 1: F1)

Tokens are SQuAD-normalised words (lower case, punctuation and articles removed), as in
``probeguard.nlp.text.normalize_answer``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from probeguard.nlp.text import normalize_answer


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence (O(len(a)·len(b)) time, O(len(b)) memory)."""
    if not a or not b:
        return 0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, start=1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


@dataclass(frozen=True)
class RougeL:
    precision: float
    recall: float
    f1: float


def rouge_l(candidate: str, reference: str) -> RougeL:
    """ROUGE-L of ``candidate`` against ``reference`` (formula in the module doc); all zeros
    when either side has no tokens."""
    cand = normalize_answer(candidate).split()
    ref = normalize_answer(reference).split()
    lcs = lcs_length(ref, cand)
    if lcs == 0:
        return RougeL(0.0, 0.0, 0.0)
    p, r = lcs / len(cand), lcs / len(ref)
    return RougeL(precision=p, recall=r, f1=2 * p * r / (p + r))


def standard_eval_failed(
    answer: str,
    gold_answers: Sequence[str],
    *,
    threshold: float = 0.75,
    measure: Literal["recall", "f1"] = "recall",
) -> bool:
    """The standard-evaluation verdict: failed when the best ROUGE-L ``measure`` over the gold
    answers is below ``threshold``. Recall is the default because gold answers are short spans
    and correct answers are sentences: F1 would fail a correct, complete sentence for being
    longer than "30 days". The 0.75 default fails "14 days" against "30 days" (recall 0.5),
    which a 0.5 threshold would pass."""
    best = max((getattr(rouge_l(answer, g), measure) for g in gold_answers), default=0.0)
    return best < threshold

"""Lexical answer metrics against gold answers: exact match, word-level token F1, containment.

Exactly the SQuAD v1.1 rules (Rajpurkar et al. 2016, official ``evaluate-v1.1.py``). Both
strings are normalised with ``probeguard.nlp.text.normalize_answer`` (lower case, punctuation
removed, articles a/an/the removed, whitespace collapsed) and split on whitespace into
**word** tokens — never characters (a published RAG evaluation computed "F1" over the
characters of the strings by passing them to ``Counter`` unsplit; that rewards anagrams).

    EM(p, g) = 1 if norm(p) == norm(g) else 0
    F1(p, g) = 2·P·R / (P + R),  P = c / |tok(p)|,  R = c / |tok(g)|,
               c = Σ_w min(count_p(w), count_g(w))   (multiset overlap; F1 = 0 when c = 0)

With several gold answers each score is the **maximum** over the golds
(``metric_max_over_ground_truths``). As in v1.1, a prediction and gold that both normalise to
nothing have EM 1 and F1 0. No gold answer at all → NaN (nothing to compare with).

Containment (``contains_answer``, re-exported from ``probeguard.nlp.text``): the normalised gold
occurs in the normalised prediction on word boundaries.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from probeguard.nlp.text import contains_answer, normalize_answer

__all__ = [
    "Golds",
    "containment",
    "contains_answer",
    "exact_match",
    "exact_match_one",
    "token_f1",
    "token_f1_one",
]

Golds = str | Sequence[str]
"""One gold answer or several."""


def _golds(golds: Golds) -> list[str]:
    return [golds] if isinstance(golds, str) else list(golds)


def _max_over(score: Callable[[str, str], float], prediction: str, golds: Golds) -> float:
    values = [score(prediction, g) for g in _golds(golds)]
    return max(values) if values else float("nan")


def exact_match_one(prediction: str, gold: str) -> float:
    """EM against one gold answer: 1.0 when the SQuAD-normalised strings are equal."""
    return float(normalize_answer(prediction) == normalize_answer(gold))


def token_f1_one(prediction: str, gold: str) -> float:
    """Word-level token F1 against one gold answer (``f1_score`` of ``evaluate-v1.1.py``;
    formula in the module doc)."""
    pred_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(gold).split()
    common = Counter(pred_tokens) & Counter(gold_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(pred_tokens)
    recall = same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def exact_match(prediction: str, golds: Golds) -> float:
    """max over gold answers of ``exact_match_one``; NaN with no gold answer."""
    return _max_over(exact_match_one, prediction, golds)


def token_f1(prediction: str, golds: Golds) -> float:
    """max over gold answers of ``token_f1_one``; NaN with no gold answer."""
    return _max_over(token_f1_one, prediction, golds)


def containment(prediction: str, golds: Golds) -> float:
    """1.0 when the prediction contains some gold answer (``contains_answer``), else 0.0;
    NaN with no gold answer."""
    return _max_over(lambda p, g: float(contains_answer(p, g)), prediction, golds)

"""A graded faithfulness that ranks answers: ``support_score`` over a claim×chunk judgment
(``detectors.judges.Verdict.support``), beside the share of verdicts ``metrics.judged``
counts; ``claim_grades`` gives each scored claim's grade, which both read."""

from __future__ import annotations

import math

from probeguard.detectors.judges import Judgment

__all__ = ["claim_grades", "support_score"]

NAN = float("nan")


def claim_grades(judgment: Judgment) -> list[float]:
    """Each scored claim's grade, in claim order::

        g(c) = max over chunks k of  g(c, k)

    with ``g(c, k)`` the judge's graded support of the cell (``Verdict.support``; the offline
    judge: ``detectors.grading``'s logistic grade, which counts a contradiction as a penalty)
    and, where a judge gives none, 1 for a supported cell and 0 for any other, so a
    contradicted claim counts 0 for such a judge; any claim counts 0 when there is no
    context. A claim is scored when its label is not unscored (as in ``faithfulness``)."""
    labels = judgment.claim_labels()
    return [
        0.0
        if not row
        else max(
            v.support if not math.isnan(v.support) else float(v.label == "supported") for v in row
        )
        for row, label in zip(judgment.verdicts, labels)
        if label != "unscored"
    ]


def support_score(judgment: Judgment) -> float:
    """A graded faithfulness that ranks answers (AUROC), not only a share of verdicts::

        G = mean over scored claims c of g(c)        (``claim_grades``)

    For a judge that grades nothing ``G`` is ``faithfulness``. NaN when no claim was
    scored."""
    grades = claim_grades(judgment)
    return sum(grades) / len(grades) if grades else NAN

"""Which record score answers "is the whole claim supported?" best, judged on dev splits alone:
the evidence behind the bench's record aggregation (``metrics.graded``).

    python -m benchmarks.record_aggregation [--data DIR] [--repeats 30] [--seed 1]

**Data (dev only; no test record is read).** The dev records ``benchmarks.fit_support_grade``
fits on (WiCE ``claim_dev``, BEGIN's WoW, CMU-DoG and TopicalChat dev files, HaluEval's dev
half), each judged once by the shipped ``OfflineJudge`` on the bench's path
(``judges_models.judgment_of``); ``metrics.graded.claim_grades`` gives the grades g₁..gₙ of
its scored claims. Aggregations of those grades into one record score:

- ``mean``: (1/n)·Σ gᵢ (``support_score``, graded faithfulness);
- ``min``: minᵢ gᵢ (the weakest claim: the record is supported only if every claim is);
- ``power_p`` (p < 0): the generalised mean ((1/n)·Σ gᵢᵖ)^(1/p), a soft minimum (Hardy,
  Littlewood & Pólya 1934, *Inequalities*, §2.2: it falls from the mean to the min as p → −∞);
  0 when a grade is 0;
- ``weakest2``: the mean of the two lowest grades (the one grade when n = 1);
- ``product``: Πᵢ gᵢ (every claim supported, the claims taken as independent);
- ``min_verifiable``: the min over the claims a document can attest (not
  ``claims.is_unverifiable``: no question, exclamation or first-person claim; AIS attributes
  information, Rashkin et al. 2021), the mean when there is none;
- ``mean_no_fillers``: the mean over the claims that are not conversational fillers
  (``is_filler``: a clause left without a word once a closed list of interjections,
  greetings and thanks is removed, "Sure !", "Oh wow.", "Great question!"; "yes" and "no"
  are kept: they answer the question), NaN (unscored) when every claim is one. Tried as a
  claims rule (fillers are no claim about the world; AIS attributes information, Rashkin et
  al. 2021) and not adopted: on dev it moves no dataset (README, **Where the offline judge
  stands**);
- ``whole`` (not an aggregation: the response judged as one claim, undecomposed,
  ``support_score``) and ``mean_whole``: (``mean`` + ``whole``)/2, ``whole`` NaN read as 0.

**Refit** (``--refit``): the grade's coefficients are fitted under the aggregation they serve.
``fit_support_grade`` fits β for the mean (every claim carries its record's label); for the
min, a supported record needs every claim high (every claim labelled 1, as there) but an
unsupported one only its weakest claim low, so an unsupported record's whole weight goes to
its weakest claim under the current β (the multiple-instance reading of the min; round 0: the
lowest rule grade). Printed: dev AUROC per dataset in-sample and leave-one-family-out for
(mean fit, mean) and (min fit, min).

**Printed** per dataset: n (records with a scored claim), the share with more than one scored
claim, and per aggregation the dev AUROC (``metrics.gate.auroc``) and the mean held-out
balanced accuracy of the bench's threshold rule (``stats.stable_threshold``) under repeated
two-fold cross-validation (``benchmarks.threshold_rules.held_out``, the same splits for every
aggregation); the token-overlap baseline alongside.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from benchmarks.fit_support_grade import (
    FAMILIES,
    ROUNDS,
    Record,
    area,
    dev_sets,
    features,
    fit,
    newton,
    scores,
    weights,
)
from benchmarks.threshold_rules import held_out
from probeguard.core.pipeline import Context
from probeguard.detectors.claims import is_unverifiable
from probeguard.detectors.judges import judge_claims
from probeguard.detectors.offline_judge import OfflineJudge
from probeguard.engine.bench.judges_data import LabelledClaim
from probeguard.engine.bench.judges_models import judgment_of, token_overlap
from probeguard.metrics.gate import auroc
from probeguard.metrics.graded import claim_grades, support_score
from probeguard.nlp.text import words
from probeguard.stats import stable_threshold


def power_mean(p: float) -> Callable[[np.ndarray], float]:
    """The generalised mean with exponent ``p`` < 0 of the module doc."""

    def agg(g: np.ndarray) -> float:
        if np.any(g <= 0):
            return 0.0
        return float(np.mean(g**p) ** (1.0 / p))

    return agg


Aggregation = Callable[[np.ndarray, np.ndarray, np.ndarray], float]
"""(grades, verifiable mask, filler mask) -> record score."""

FILLERS = frozenset(
    """
sure okay ok oh ohh wow well hmm hm yeah yep yup great cool nice awesome wonderful thanks
haha lol hi hello hey indeed absolutely certainly alright ah aha um uh er anyway interesting
""".split()
)
"""``mean_no_fillers``'s closed list of filler words (``words`` tokens); not "yes" or "no"."""

_FILLER_PHRASES = re.compile(
    r"\b(?:thank you(?: (?:so|very) much)?|of course|(?:great|good|nice|interesting) "
    r"(?:question|point)|no problem|you're welcome|good to know|how interesting|that's "
    r"(?:great|cool|nice|awesome|interesting|right|true)|(?:hi|hello|hey) there|ha(?:ha)+"
    r"|h+m+)\b",
    re.IGNORECASE,
)


def is_filler(text: str) -> bool:
    """A clause with a word and none left once ``_FILLER_PHRASES`` and ``FILLERS`` are
    removed (module doc, ``mean_no_fillers``)."""
    if not words(text):
        return False
    return all(w in FILLERS for w in words(_FILLER_PHRASES.sub(" ", text)))


def _mean_no_fillers(g: np.ndarray, filler: np.ndarray) -> float:
    return float(np.mean(g[~filler])) if (~filler).any() else float("nan")


def _weakest_verifiable(g: np.ndarray, verifiable: np.ndarray) -> float:
    return float(np.min(g[verifiable])) if verifiable.any() else float(np.mean(g))


AGGREGATIONS: dict[str, Aggregation] = {
    "mean": lambda g, *_: float(np.mean(g)),
    "power_-1": lambda g, *_: power_mean(-1.0)(g),
    "power_-2": lambda g, *_: power_mean(-2.0)(g),
    "power_-4": lambda g, *_: power_mean(-4.0)(g),
    "weakest2": lambda g, *_: float(np.mean(np.sort(g)[:2])),
    "min": lambda g, *_: float(np.min(g)),
    "product": lambda g, *_: float(np.prod(g)),
    "min_verifiable": lambda g, v, _: _weakest_verifiable(g, v),
    "mean_no_fillers": lambda g, _, f: _mean_no_fillers(g, f),
}


def whole_grade(judge: OfflineJudge, record: LabelledClaim) -> float:
    """``whole`` of the module doc: ``support_score`` of the undecomposed response."""
    contexts = [Context(f"{record.id}#{k + 1}", t) for k, t in enumerate(record.contexts)]
    return support_score(judge_claims(judge, [record.claim], contexts, record.question))


def graded_claims(
    judge: OfflineJudge, record: LabelledClaim
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The record's claim grades (``claim_grades``), whether each claim is verifiable (not
    ``claims.is_unverifiable``) and whether it is a filler (``is_filler``); empty when
    nothing was scored."""
    judgment = judgment_of(judge, record)
    if judgment is None:
        return np.zeros(0), np.zeros(0, bool), np.zeros(0, bool)
    labels = judgment.claim_labels()
    texts = [c for c, label in zip(judgment.claims, labels) if label != "unscored"]
    grades = np.asarray(claim_grades(judgment), float)
    verifiable = np.asarray([not is_unverifiable(t) for t in texts], bool)
    return grades, verifiable, np.asarray([is_filler(t) for t in texts], bool)


def measure(values: np.ndarray, labels: np.ndarray, repeats: int, seed: int) -> dict[str, float]:
    """Dev AUROC and cross-validated BA of one score over one dataset (module doc)."""
    keep = ~np.isnan(values)
    v, y = values[keep], labels[keep]
    rng = np.random.default_rng(seed)
    return {
        "auroc": round(auroc(v[y], v[~y]), 4),
        "cv_ba": round(held_out(v, y, stable_threshold, rng, repeats), 4),
    }


def fit_weakest(records: Sequence[Record]) -> np.ndarray:
    """β for the min aggregation (module doc, **Refit**)."""
    beta = np.zeros(records[0][2][0].shape[1] + 1)
    per = weights(records)
    for round_ in range(ROUNDS):
        rows, ys, ws = [], [], []
        for (_, label, claims, _), weight in zip(records, per):
            xs = [np.hstack([np.ones((len(c), 1)), c]) for c in claims]
            best = [x[int(np.argmax(x[:, 1] if round_ == 0 else x @ beta))] for x in xs]
            if not label:
                grade = [b[1] if round_ == 0 else float(b @ beta) for b in best]
                best = [best[int(np.argmin(grade))]]
            rows.extend(best)
            ys.extend([float(label)] * len(best))
            ws.extend([weight / len(best)] * len(best))
        w = np.asarray(ws)
        beta = newton(np.asarray(rows), np.asarray(ys), w / w.sum(), beta)
    return beta


def min_scores(records: Sequence[Record], beta: np.ndarray) -> list[float]:
    """The min aggregation of each record under β."""
    return scores(records, beta, np.min)


def refit(data: Path) -> None:
    """The **Refit** comparison of the module doc."""
    judge = OfflineJudge(graded=False)
    records: list[Record] = []
    for ds, recs in dev_sets(data).items():
        for r in recs:
            claims = features(judge, r)
            if claims:
                records.append((ds, r.label, claims, token_overlap(r.claim, r.contexts)))
    ways = {"mean": (fit, scores), "min": (fit_weakest, min_scores)}
    full = {name: fitter(records) for name, (fitter, _) in ways.items()}
    for ds, family in FAMILIES.items():
        mine = [r for r in records if r[0] == ds]
        labels = [r[1] for r in mine]
        row: dict[str, float] = {"token_overlap": area(labels, [r[3] for r in mine])}
        for name, (fitter, scorer) in ways.items():
            out = fitter([r for r in records if FAMILIES[r[0]] != family])
            row[f"{name}_in_sample"] = area(labels, scorer(mine, full[name]))
            row[f"{name}_leave_family_out"] = area(labels, scorer(mine, out))
        print(ds, json.dumps(row), flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--refit", action="store_true")
    args = parser.parse_args(argv)
    if args.refit:
        refit(args.data)
        return
    judge = OfflineJudge()
    for ds, records in dev_sets(args.data).items():
        graded, labels, base, whole = [], [], [], []
        for r in records:
            g, verifiable, filler = graded_claims(judge, r)
            if g.size:
                graded.append((g, verifiable, filler))
                labels.append(r.label)
                base.append(token_overlap(r.claim, r.contexts))
                whole.append(whole_grade(judge, r))
        y = np.asarray(labels, bool)
        multi = float(np.mean([g.size > 1 for g, *_ in graded]))
        row: dict[str, object] = {"n": len(graded), "multi": round(multi, 3)}
        row["token_overlap"] = measure(np.asarray(base, float), y, args.repeats, args.seed)
        for name, agg in AGGREGATIONS.items():
            values = np.asarray([agg(g, v, f) for g, v, f in graded], float)
            row[name] = measure(values, y, args.repeats, args.seed)
        means = np.asarray([float(np.mean(g)) for g, *_ in graded])
        row["whole"] = measure(np.asarray(whole, float), y, args.repeats, args.seed)
        mixed = (means + np.nan_to_num(np.asarray(whole, float), nan=0.0)) / 2
        row["mean_whole"] = measure(mixed, y, args.repeats, args.seed)
        print(ds, json.dumps(row), flush=True)


if __name__ == "__main__":
    main()

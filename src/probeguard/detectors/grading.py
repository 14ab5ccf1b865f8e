"""The offline judge's graded support (judge version 6; grade 7 adds ``u``; grade 8 adds ``p``
and reads ``n`` in one passage): a logistic combination of its rule grade with what the
claim's words, names and values find in the contexts, so that the score ranks claims (AUROC)
rather than falling into a few coarse bands.

For a claim ``c`` and a chunk ``k`` of the contexts ``K``::

    support(c, k) = σ(β0 + β_r·r + β_o·o + β_x·x + β_n·n + β_v·v + β_u·u + β_p·p),   σ(z) = 1/(1 + e^(−z))

- ``r`` the **rule grade** of the cell (``offline_judge`` module docstring, **Graded
  support**): supported 0.9 + 0.1·cov of the deciding sentence or group; unsupported
  0.9·max(best ``cov``, ``cov`` of the chunk's spread group); contradicted 0.9·``cov`` of
  the conflicting sentence (the conflict counts through ``x``, not by zeroing ``r``);
- ``o`` the **word overlap** of the claim with the whole context: |content words of ``c``
  found among the content words of ``K``| / |content words of ``c``| (``word_overlap``;
  0 for a claim without content words, a value answer whose numbers ``v`` checks): words
  spread over several passages count, which ``r`` (one chunk, at most three sentences)
  misses;
- ``x`` = 1 when the cell is contradicted (a number, date, year or polarity conflict);
- ``n`` the **passage names**: max over chunks ``k`` of the share of the claim's capitalised
  names (``sentences.claim_names``) among the stems of ``k``'s sentences, own or inherited
  through a pronoun (1 for a claim without names, 0 without contexts): a missing name is a
  rare, specific word the context does not hold, and names found only in different passages
  ("Nordvik" on one page, "Tromsø" on another) are rarely about one thing (grade 7 took the
  share over all the chunks at once);
- ``v`` = 1 when every number and calendar date of the claim has its equal somewhere in
  ``K`` (``value_checks.number_check`` and ``date_check`` over the joined contexts; 1 for a
  claim without any);
- ``u`` = 1 when the claim is **unverifiable** (``claims.is_unverifiable``: a question, an
  exclamation, or told in the first person singular): it conveys the speaker's asking,
  feeling or experience, which attribution to a source cannot cover (AIS: Rashkin et al.
  2021; BEGIN: Dziri et al. 2022), however many of its words the context holds ("Do you
  like the music accompanying video games?" shares most of its words with "Video game music
  is the soundtrack that accompanies video games.").
- ``p`` the **passage coverage**: max over chunks ``k`` of ``set_coverage(terms(c), S_k)``,
  the coverage of the claim's stems (``sentences.claim_terms``) by the union of *all* the
  chunk's sentences ``S_k`` (own words 1, words only reached through a pronoun 0.75, synonyms
  as in ``cov``; 1 for a claim without such stems, whose numbers ``v`` checks): how much of
  the claim one passage covers, its sentences adjacent or not. It sits between ``r`` (one
  sentence, or a group of at most three) and ``o`` (every chunk at once): on a long
  cited page a multi-fact claim's parts are often several sentences apart in one passage
  (WiCE: Kamoi et al. 2023), while words scattered over unrelated passages are weaker
  evidence than the same words in one.

``o``, ``n``, ``v``, ``u`` and ``p`` belong to the claim and the set of contexts, so they never depend on
the chunks' order. The coefficients β are fitted by ``benchmarks/fit_support_grade.py``
(L2-penalised logistic regression on dev splits only: WiCE dev, BEGIN's WoW, CMU-DoG and
TopicalChat dev files, HaluEval's seeded dev half; each dataset family weighted equally) and
shipped with their provenance in ``detectors/data/support_grade.json``. Verdicts (supported,
unsupported, contradicted) are the rules' alone: only the grade changes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from typing import Any

from probeguard.core.hashing import digest
from probeguard.detectors.claims import is_unverifiable
from probeguard.detectors.judges import Verdict
from probeguard.detectors.sentences import (
    Sentence,
    chunk_sentences,
    claim_names,
    claim_terms,
    set_coverage,
)
from probeguard.detectors.spread import UNSUPPORTED_GRADE
from probeguard.detectors.value_checks import date_check, number_check
from probeguard.nlp.text import content_words

__all__ = [
    "FEATURES",
    "ClaimContext",
    "GradeModel",
    "cell_features",
    "claim_context",
    "grade_model",
    "passage_coverage",
    "passage_names",
    "regrade",
    "word_overlap",
]

FEATURES = ("rule", "overlap", "contradicted", "names", "values", "unverifiable", "passage")
"""The order of the features (module doc: r, o, x, n, v, u, p) in the model file."""
MODEL_FILE = "support_grade.json"


def word_overlap(claim: str, contexts: Sequence[str]) -> float:
    """``o`` of the module doc, NaN when the claim has no content words (the caller decides
    what that counts as): the share of the claim's content words among the contexts'."""
    tokens = content_words(claim)
    if not tokens:
        return math.nan
    vocab = {t for c in contexts for t in content_words(c)}
    return sum(t in vocab for t in tokens) / len(tokens)


@dataclass(frozen=True)
class ClaimContext:
    """The claim-level features ``o``, ``n``, ``v``, ``u`` and ``p`` of the module doc."""

    overlap: float
    names: float
    values: float
    unverifiable: float = 0.0
    passage: float = 1.0


def passage_coverage(claim: str, contexts: Sequence[str]) -> float:
    """``p`` of the module doc: the best coverage of the claim's stems by one chunk's
    sentences taken together (1.0 for a claim without stems, 0.0 without contexts)."""
    terms = claim_terms(claim)
    if not terms:
        return 1.0
    return max((set_coverage(terms, (_passage(c),)) for c in contexts), default=0.0)


def passage_names(claim: str, contexts: Sequence[str]) -> float:
    """``n`` of the module doc: the largest share of the claim's names that one chunk's
    sentences hold (1.0 for a claim without names, 0.0 without contexts)."""
    names = claim_names(claim)
    if not names:
        return 1.0
    return max(
        (len(names & (p.own | p.inherited)) / len(names) for p in map(_passage, contexts)),
        default=0.0,
    )


@lru_cache(maxsize=4096)
def _passage(text: str) -> Sentence:
    """A chunk's sentences as one: the union of their own stems and of those inherited
    through a pronoun (``set_coverage`` of a group equals that of this one sentence)."""
    sentences = chunk_sentences(text)
    own = frozenset().union(*(s.own for s in sentences))
    inherited = frozenset().union(*(s.inherited for s in sentences))
    return Sentence(text, 0, len(text), own, inherited)


def claim_context(claim: str, contexts: Sequence[str]) -> ClaimContext:
    """``o``, ``n``, ``v``, ``u`` and ``p`` of ``claim`` over the contexts' texts."""
    overlap = word_overlap(claim, contexts)
    joined = " ".join(contexts)
    values = number_check(claim, joined)[0] and date_check(claim, joined)[0]
    return ClaimContext(
        overlap=0.0 if math.isnan(overlap) else overlap,
        names=passage_names(claim, contexts),
        values=float(values),
        unverifiable=float(is_unverifiable(claim)),
        passage=passage_coverage(claim, contexts),
    )


def cell_features(verdict: Verdict, claim: ClaimContext) -> tuple[float, ...] | None:
    """(r, o, x, n, v, u, p) of one cell, in ``FEATURES`` order; None for a cell without a rule
    grade (unscored)."""
    if verdict.label == "unscored" or math.isnan(verdict.support):
        return None
    contradicted = verdict.label == "contradicted"
    score = 0.0 if math.isnan(verdict.score) else verdict.score
    rule = UNSUPPORTED_GRADE * score if contradicted else verdict.support
    return (
        rule,
        claim.overlap,
        float(contradicted),
        claim.names,
        claim.values,
        claim.unverifiable,
        claim.passage,
    )


@dataclass(frozen=True)
class GradeModel:
    """β of the module doc and where they came from."""

    intercept: float
    coefficients: tuple[float, ...]
    provenance: dict[str, Any]

    def grade(self, features: Sequence[float]) -> float:
        """σ(β0 + Σ β_i·f_i), rounded to 6 places (byte-stable in reports)."""
        z = self.intercept + math.fsum(b * f for b, f in zip(self.coefficients, features))
        return round(1.0 / (1.0 + math.exp(-z)), 6)

    def fingerprint(self) -> str:
        return digest({"intercept": self.intercept, "coefficients": list(self.coefficients)})[:12]


@lru_cache(maxsize=1)
def grade_model() -> GradeModel:
    """The shipped model (``detectors/data/support_grade.json``)."""
    text = resources.files("probeguard.detectors").joinpath("data", MODEL_FILE).read_text("utf-8")
    data = json.loads(text)
    if tuple(data["features"]) != FEATURES:
        raise ValueError(f"{MODEL_FILE}: features {data['features']}, expected {FEATURES}")
    return GradeModel(
        intercept=float(data["intercept"]),
        coefficients=tuple(float(b) for b in data["coefficients"]),
        provenance=dict(data["provenance"]),
    )


def regrade(verdict: Verdict, claim: ClaimContext, model: GradeModel) -> Verdict:
    """``verdict`` with its ``support`` replaced by the model's grade (unscored cells as
    they are)."""
    features = cell_features(verdict, claim)
    if features is None:
        return verdict
    return replace(verdict, support=model.grade(features))

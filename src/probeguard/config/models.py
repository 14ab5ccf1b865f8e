"""Scan configuration: one pydantic model, loaded from YAML with the precedence
defaults < config file < ``PROBEGUARD_*`` environment < CLI flags (see ``config.loading``).

Secrets never live in the config: the OpenAI-compatible generator and the HTTP adapter name
the *environment variables* that hold keys (``api_key_env``, ``${NAME}`` in headers).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from probeguard.attribution.config import AttributionConfig
from probeguard.pipeline.defences.config import DefencesConfig


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CorpusConfig(_Strict):
    path: Path | None = None
    """A JSONL/JSON/CSV file or a folder of .txt/.md files. None with ``demo: true``."""
    format: Literal["jsonl", "json", "csv", "folder"] | None = None
    """Guessed from the path when omitted."""
    questions: Path | None = None
    """Golden questions (JSONL/JSON): ``{id, question, answers, evidence_doc_ids, mode, tags}``."""
    attacks: Path | None = None
    """Attack cases for the ``attack_types`` probe (JSONL/JSON): the golden-question fields
    plus a required ``type`` (``probeguard.dataset.attack_types``). ``demo: true`` uses the
    bundled ``attacks.jsonl``."""


class ReferencePipelineConfig(_Strict):
    """The built-in pipeline: chunker → retriever (→ re-ranker) → generator."""

    chunker: dict[str, Any] = Field(
        default_factory=lambda: {"name": "tokens", "size": 128, "overlap": 32})
    embedder: dict[str, Any] = Field(default_factory=lambda: {"name": "minilm"})
    """Used by dense and hybrid retrieval (and by the chroma store)."""
    retriever: dict[str, Any] = Field(default_factory=lambda: {"name": "hybrid"})
    top_k: int = Field(default=5, ge=1, le=200)
    reranker: dict[str, Any] | None = None
    """e.g. ``{"name": "lexical"}`` or ``{"name": "cross-encoder", "model_name": ...}``."""
    rerank_candidates: int = Field(default=20, ge=1)
    generator: dict[str, Any] = Field(default_factory=lambda: {"name": "extractive"})
    prompt: str = "default"
    """A template name (``default``, ``hardened``) or a template text with ``{question}``."""
    defences: DefencesConfig = Field(default_factory=DefencesConfig)
    """Optional defences (trust tiers, archived-document demotion, near-duplicate
    suppression, conflict and grounding checks, the instruction sanitiser and spotlighting,
    a per-backend ``min_score`` gate, query expansion), all off by default: see
    ``probeguard.pipeline.defences``."""


class CallablePipelineConfig(_Strict):
    target: str
    """``package.module:function``."""
    version: str = ""
    """Bump when the function's behaviour changes: it is part of the cache key."""


class HttpPipelineConfig(_Strict):
    url: str
    method: str = "POST"
    headers: dict[str, str] = Field(default_factory=dict)
    """Values may reference environment variables as ``${NAME}`` (expanded per call)."""
    request_template: Any = Field(default_factory=lambda: {"question": "{question}"})
    answer_path: str = "answer"
    contexts_path: str | None = None
    context_text_field: str | None = "text"
    doc_id_field: str | None = "doc_id"
    chunk_id_field: str | None = "chunk_id"
    score_field: str | None = "score"
    citations_path: str | None = None
    refused_path: str | None = None
    timeout_s: float = 60.0
    variation_field: str | None = None
    """When set, the request carries the ``Variation`` JSON under this key, and the endpoint
    is trusted to honour the ``capabilities`` listed below."""
    capabilities: list[str] = Field(default_factory=list)
    version: str = ""
    """Bump when the service's behaviour changes: it is part of the cache key."""


class PipelineConfig(_Strict):
    type: Literal["reference", "callable", "http"] = "reference"
    reference: ReferencePipelineConfig = Field(default_factory=ReferencePipelineConfig)
    callable: CallablePipelineConfig | None = None
    http: HttpPipelineConfig | None = None


class RunnerSettings(_Strict):
    concurrency: int = Field(default=4, ge=1, le=1024)
    timeout_s: float = Field(default=120.0, gt=0)
    retries: int = Field(default=3, ge=0, le=20)
    cache_dir: Path | None = Path(".probeguard-cache")
    """Content-addressed response cache; None disables it."""


ALL_PROBES = ["chunk_fracture", "retrieval_gap", "corpus_contradiction", "prompt_hijack",
              "corpus_poisoning", "unanswerable", "benign_control", "attack_types"]


class ProbesConfig(_Strict):
    """Which probes run, their settings, and the FCS overlap weights."""

    enabled: list[str] = Field(default_factory=lambda: list(ALL_PROBES))
    settings: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per-probe constructor settings, e.g. ``{"retrieval_gap": {"rank_delta_threshold": 2}}``."""
    overlap_weights: dict[str, float] = Field(default_factory=dict)
    """Overrides of the default FCS overlap weights (share of a probe's failures that
    standard evaluation also catches)."""
    top_k: int | None = Field(default=None, ge=1)
    """The pipeline's retrieval depth, for pipelines that do not report it (the reference
    pipeline does)."""

    @field_validator("enabled")
    @classmethod
    def _unique(cls, names: list[str]) -> list[str]:
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"probes listed more than once: {', '.join(repeated)}")
        return names


class StandardEvalConfig(_Strict):
    """The standard-evaluation baseline: ROUGE-L of the answer against the gold answers."""

    measure: Literal["recall", "f1"] = "recall"
    threshold: float = Field(default=0.75, ge=0.0, le=1.0)


JUDGE_NAMES = ("offline", "nli", "llm")


class OfflineJudgeConfig(_Strict):
    """``probeguard.detectors.OfflineJudge``: lexical entailment, no model."""

    support: float = Field(default=0.75, gt=0.0, le=1.0)
    """Least share of the claim's words a sentence must hold to support it."""
    about: float = Field(default=0.5, gt=0.0, le=1.0)
    """Least share for a sentence to be about the claim (and so able to contradict it)."""
    relevance: float = Field(default=0.35, gt=0.0, le=1.0)
    """Least idf-weighted support for a statement to be relevant to a question."""


class NliJudgeConfig(_Strict):
    """``probeguard.detectors.NliJudge``: an NLI cross-encoder (extra
    ``sentence-transformers``; the model comes from the Hugging Face hub)."""

    model_name: str = "cross-encoder/nli-deberta-v3-base"
    threshold: float = Field(default=0.5, gt=0.0, lt=1.0)
    device: str = "cpu"
    batch_size: int = Field(default=16, ge=1)


class LlmJudgeConfig(_Strict):
    """``probeguard.detectors.LlmJudge`` over an OpenAI-compatible endpoint, temperature 0.
    The key is read from the environment variable named by ``api_key_env`` (never written
    in the config)."""

    base_url: str = "https://api.openai.com/v1"
    model: str = "gpt-4o-mini"
    api_key_env: str | None = "OPENAI_API_KEY"
    mode: Literal["claim", "pair"] = "claim"
    """``claim``: one call per claim over all chunks; ``pair``: one call per (claim, chunk)."""
    format_retries: int = Field(default=2, ge=0, le=10)
    """Re-asks after a malformed reply; then the cell is unscored with the reason."""
    max_tokens: int = Field(default=512, ge=1)
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=3, ge=0, le=20)
    """HTTP retries (429, 5xx, timeouts)."""
    seed: int | None = None
    concurrency: int = Field(default=8, ge=1, le=256)


class ConsensusConfig(_Strict):
    """Several judges vote per (claim, chunk) cell (``probeguard.detectors.Consensus``)."""

    judges: list[Literal["offline", "nli", "llm"]] = Field(min_length=2)
    """Each built from its section of ``judge`` (``judge.offline``, ``judge.nli``, ...)."""
    rule: Literal["majority", "unanimous"] = "majority"

    @field_validator("judges")
    @classmethod
    def _unique_judges(cls, names: list[str]) -> list[str]:
        if len(set(names)) != len(names):
            raise ValueError("a judge is listed more than once")
        return names


class JudgeConfig(_Strict):
    """The claim judge of the standard metrics (``probeguard eval`` and the golden questions
    of a scan)."""

    name: Literal["offline", "nli", "llm"] = "offline"
    """The judge; ignored when ``consensus`` is set."""
    offline: OfflineJudgeConfig = Field(default_factory=OfflineJudgeConfig)
    nli: NliJudgeConfig = Field(default_factory=NliJudgeConfig)
    llm: LlmJudgeConfig = Field(default_factory=LlmJudgeConfig)
    position_swap: bool = False
    """Judge twice, the contexts reversed the second time; a cell whose verdict changes
    becomes unscored (``probeguard.detectors.PositionSwap``)."""
    consensus: ConsensusConfig | None = None
    relevance: Literal["auto", "offline", "llm"] = "auto"
    """Who decides relevance (contextual and answer relevancy): ``auto`` is the LLM judge when
    ``llm`` is the judge or one of the consensus, else the offline heuristics."""


class Thresholds(_Strict):
    """Least acceptable mean per metric (``null``: no threshold). ``probeguard eval`` exits 1
    when a metric's mean falls below its threshold."""

    context_precision: float | None = Field(default=0.80, ge=0.0, le=1.0)
    context_recall: float | None = Field(default=0.85, ge=0.0, le=1.0)
    contextual_relevancy: float | None = Field(default=0.75, ge=0.0, le=1.0)
    faithfulness: float | None = Field(default=0.90, ge=0.0, le=1.0)
    answer_relevancy: float | None = Field(default=0.80, ge=0.0, le=1.0)
    exact_match: float | None = Field(default=None, ge=0.0, le=1.0)
    token_f1: float | None = Field(default=None, ge=0.0, le=1.0)
    containment: float | None = Field(default=None, ge=0.0, le=1.0)


class EvalConfig(_Strict):
    """``probeguard eval``: thresholds on the standard metrics."""

    thresholds: Thresholds = Field(default_factory=Thresholds)


class MetricsConfig(_Strict):
    """Which metric families a scan computes."""

    standard: bool = True
    """The standard metrics (faithfulness, context precision/recall, relevancy, EM/F1) on the
    answerable golden questions, in ``summary.golden.standard``."""


class ScanConfig(_Strict):
    """Everything a scan needs. ``probeguard scan --config FILE`` reads this from YAML."""

    seed: int = 0
    demo: bool = False
    """Use the bundled demo corpus and golden questions (``corpus`` is then ignored)."""
    corpus: CorpusConfig = Field(default_factory=CorpusConfig)
    pipeline: PipelineConfig = Field(default_factory=PipelineConfig)
    runner: RunnerSettings = Field(default_factory=RunnerSettings)
    probes: ProbesConfig = Field(default_factory=ProbesConfig)
    standard_eval: StandardEvalConfig = Field(default_factory=StandardEvalConfig)
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    metrics: MetricsConfig = Field(default_factory=MetricsConfig)
    eval: EvalConfig = Field(default_factory=EvalConfig)
    attribution: AttributionConfig = Field(default_factory=AttributionConfig)
    """The surgeon: counterfactual re-runs of each failure, its cause and fix."""

    def recorded(self) -> dict[str, Any]:
        """The config as recorded in the run log (and shown in the report). Header values
        (the HTTP adapter's ``headers``, the OpenAI-compatible generator's
        ``extra_headers``) are kept only where they are pure ``${NAME}`` references; a
        literal value (a pasted token) becomes ``<redacted>``. URLs (the endpoint's ``url``,
        the generator's and the LLM judge's ``base_url``) lose their user info and query
        values, which often carry keys (``?api_key=...``). So no secret reaches a run log or a report."""
        from probeguard.pipeline.adapters.http import redact_url

        data = self.model_dump(mode="json")
        http = data["pipeline"].get("http")
        if http:
            http["url"] = redact_url(http["url"])
            http["headers"] = _redact_headers(http["headers"])
        generator = data["pipeline"]["reference"].get("generator")
        if isinstance(generator, dict):
            if isinstance(generator.get("extra_headers"), dict):
                generator["extra_headers"] = _redact_headers(generator["extra_headers"])
            if isinstance(generator.get("base_url"), str):
                generator["base_url"] = redact_url(generator["base_url"])
        data["judge"]["llm"]["base_url"] = redact_url(data["judge"]["llm"]["base_url"])
        return data


def _redact_headers(headers: dict[str, Any]) -> dict[str, str]:
    return {str(k): v if isinstance(v, str) and _ENV_ONLY.fullmatch(v) else "<redacted>"
            for k, v in headers.items()}


_ENV_ONLY = re.compile(r"(?:[A-Za-z-]+ )?\$\{[A-Za-z_][A-Za-z0-9_]*\}")

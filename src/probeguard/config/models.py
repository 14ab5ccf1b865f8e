"""Scan configuration: one pydantic model, loaded from YAML with the precedence
defaults < config file < ``PROBEGUARD_*`` environment < CLI flags (see ``config.loading``).

Secrets never live in the config: the OpenAI-compatible generator and the HTTP adapter name
the *environment variables* that hold keys (``api_key_env``, ``${NAME}`` in headers).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field

from probeguard.attribution.config import AttributionConfig
from probeguard.config.gate import GatePolicy
from probeguard.core.config import StrictModel
from probeguard.corpus.config import CorpusConfig
from probeguard.detectors.config import JudgeConfig
from probeguard.metrics.config import EvalConfig, MetricsConfig, StandardEvalConfig
from probeguard.pipeline.adapters.http import redact_url
from probeguard.pipeline.config import PipelineConfig
from probeguard.probes.config import ProbesConfig
from probeguard.runner.settings import RunnerSettings


class ScanConfig(StrictModel):
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
    gate: GatePolicy | None = Field(default=None, exclude_if=lambda v: v is None)
    """The release gate (``config.gate``): applied by ``scan --baseline``/``--gate`` and
    ``probeguard compare``; None: no gate unless one is given on the command line."""

    def recorded(self) -> dict[str, Any]:
        """The config as recorded in the run log (and shown in the report). Header values
        (the HTTP adapter's ``headers``, the OpenAI-compatible generator's
        ``extra_headers``) are kept only where they are pure ``${NAME}`` references; a
        literal value (a pasted token) becomes ``<redacted>``. URLs (the endpoint's ``url``,
        the generator's and the LLM judge's ``base_url``) lose their user info and query
        values, which often carry keys (``?api_key=...``). So no secret reaches a run log or a report."""
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
    return {
        str(k): v if isinstance(v, str) and _ENV_ONLY.fullmatch(v) else "<redacted>"
        for k, v in headers.items()
    }


_ENV_ONLY = re.compile(r"(?:[A-Za-z-]+ )?\$\{[A-Za-z_][A-Za-z0-9_]*\}")

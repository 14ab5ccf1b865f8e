"""Scan configuration and its loading: ``ScanConfig`` composes each layer's own settings."""

from probeguard.config.gate import GatePolicy, SliceLimit
from probeguard.config.loading import load_config, load_gate_policy
from probeguard.config.models import ScanConfig
from probeguard.corpus.config import CorpusConfig
from probeguard.pipeline.config import PipelineConfig, ReferencePipelineConfig
from probeguard.runner.settings import RunnerSettings

__all__ = [
    "CorpusConfig",
    "GatePolicy",
    "PipelineConfig",
    "ReferencePipelineConfig",
    "RunnerSettings",
    "ScanConfig",
    "SliceLimit",
    "load_config",
    "load_gate_policy",
]

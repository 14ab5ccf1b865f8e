"""Scan configuration and its loading: ``ScanConfig`` composes each layer's own settings."""

from probeguard.config.loading import load_config
from probeguard.config.models import ScanConfig
from probeguard.corpus.config import CorpusConfig
from probeguard.pipeline.config import PipelineConfig, ReferencePipelineConfig
from probeguard.runner.settings import RunnerSettings

__all__ = [
    "CorpusConfig",
    "PipelineConfig",
    "ReferencePipelineConfig",
    "RunnerSettings",
    "ScanConfig",
    "load_config",
]

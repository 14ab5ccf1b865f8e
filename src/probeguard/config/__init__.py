"""Scan configuration and its loading."""

from probeguard.config.loading import load_config
from probeguard.config.models import (CorpusConfig, PipelineConfig, ReferencePipelineConfig,
                                      RunnerSettings, ScanConfig)

__all__ = ["CorpusConfig", "PipelineConfig", "ReferencePipelineConfig", "RunnerSettings",
           "ScanConfig", "load_config"]

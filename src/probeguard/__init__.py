"""ProbeGuard: find a RAG pipeline's failures before its users do.

The public API lives here; everything else is internal and may change.

    from probeguard import load_config, scan
    result = scan(load_config("probeguard.yaml"), "runs/mine")
    print(result.report_path)
"""

from probeguard._version import __version__
from probeguard.config import ScanConfig, load_config
from probeguard.core import (Capability, Case, CaseRecord, Chunk, Document, Estimate, Expected,
                             InputError, MissingExtraError, Pipeline, PipelineCallError,
                             PipelineOutput, ProbeGuardError, RetrievedChunk,
                             UnsupportedCapabilityError, Variation, corpus_fingerprint)
from probeguard.core.records import RunLog
from probeguard.stats import wilson

__all__ = [
    "__version__",
    "Capability", "Case", "CaseRecord", "Chunk", "Document", "Estimate", "Expected",
    "InputError", "MissingExtraError", "Pipeline", "PipelineCallError", "PipelineOutput",
    "ProbeGuardError", "RetrievedChunk", "RunLog", "ScanConfig", "UnsupportedCapabilityError",
    "Variation", "corpus_fingerprint", "evaluate", "load_config", "load_eval_records", "scan",
    "sweep_backends", "wilson",
]


def __getattr__(name: str):  # lazy: importing probeguard stays light
    if name == "scan":
        from probeguard.engine.scan import scan

        return scan
    if name in ("evaluate", "load_eval_records"):
        from probeguard.engine import evaluate

        return getattr(evaluate, name)
    if name == "sweep_backends":
        from probeguard.engine.sweep import sweep_backends

        return sweep_backends
    if name == "ReferencePipeline":
        from probeguard.pipeline.reference import ReferencePipeline

        return ReferencePipeline
    raise AttributeError(f"module 'probeguard' has no attribute {name!r}")

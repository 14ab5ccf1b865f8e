"""ProbeGuard: find a RAG pipeline's failures before its users do.

The public API lives here; everything else is internal and may change.

    from probeguard import load_config, scan
    result = scan(load_config("probeguard.yaml"), "runs/mine")
    print(result.report_path)
"""

from probeguard._version import __version__
from probeguard.config import ScanConfig, load_config
from probeguard.corpus import Chunk, Document, corpus_fingerprint
from probeguard.dataset import Case, Expected
from probeguard.errors import (InputError, MissingExtraError, PipelineCallError, ProbeGuardError,
                               UnsupportedCapabilityError)
from probeguard.log import CaseRecord, RunLog
from probeguard.pipeline.base import (Capability, Pipeline, PipelineOutput, RetrievedChunk,
                                      Variation)
from probeguard.stats import Estimate, wilson

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
        from probeguard.scan import scan

        return scan
    if name in ("evaluate", "load_eval_records"):
        from probeguard import evaluation

        return getattr(evaluation, name)
    if name == "sweep_backends":
        from probeguard.sweep import sweep_backends

        return sweep_backends
    if name == "ReferencePipeline":
        from probeguard.pipeline.reference import ReferencePipeline

        return ReferencePipeline
    raise AttributeError(f"module 'probeguard' has no attribute {name!r}")

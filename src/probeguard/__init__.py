"""ProbeGuard: find a RAG pipeline's failures before its users do.

The public API lives here; everything else is internal and may change.

    from probeguard import load_config, scan
    result = scan(load_config("probeguard.yaml"), "runs/mine")
    print(result.report_path)

Your own pipeline: ``scan(config, out_dir, pipeline=CallablePipeline(my_function))``, or an
HTTP endpoint (``HttpPipeline``), or LangChain (``probeguard.adapters.langchain``). The
README's "Python API" section has runnable examples (they run in the test suite).
"""

from probeguard._version import __version__
from probeguard.config import ScanConfig, load_config
from probeguard.core import (
    Capability,
    Case,
    CaseRecord,
    Chunk,
    Document,
    Estimate,
    Expected,
    InputError,
    MissingExtraError,
    Pipeline,
    PipelineCallError,
    PipelineOutput,
    ProbeGuardError,
    RetrievedChunk,
    UnsupportedCapabilityError,
    Variation,
    corpus_fingerprint,
)
from probeguard.dataset.eval_records import load_eval_records
from probeguard.engine.evaluate import evaluate
from probeguard.engine.scan import scan
from probeguard.engine.sweep import sweep_backends
from probeguard.pipeline.adapters import CallablePipeline, HttpPipeline
from probeguard.pipeline.reference import ReferencePipeline
from probeguard.probes import (
    Headline,
    JudgeContext,
    Probe,
    ProbeContext,
    ProbeEvidence,
    ProbeSummary,
    ProbeVerdict,
    probe,
)
from probeguard.results import RunLog, load_run_log
from probeguard.stats import wilson

__all__ = [
    "__version__",
    "CallablePipeline",
    "Capability",
    "Case",
    "CaseRecord",
    "Chunk",
    "Document",
    "Estimate",
    "Expected",
    "Headline",
    "HttpPipeline",
    "InputError",
    "JudgeContext",
    "MissingExtraError",
    "Pipeline",
    "PipelineCallError",
    "PipelineOutput",
    "Probe",
    "ProbeContext",
    "ProbeEvidence",
    "ProbeGuardError",
    "ProbeSummary",
    "ProbeVerdict",
    "ReferencePipeline",
    "RetrievedChunk",
    "RunLog",
    "ScanConfig",
    "UnsupportedCapabilityError",
    "Variation",
    "corpus_fingerprint",
    "evaluate",
    "load_config",
    "load_eval_records",
    "load_run_log",
    "probe",
    "scan",
    "sweep_backends",
    "wilson",
]

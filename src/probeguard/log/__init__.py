"""Run logs: streamed JSONL records (the final ``run.json`` is ``results.run.RunLog``)."""

from probeguard.core.records import (
    RUN_LOG_VERSION,
    CaseError,
    CaseRecord,
    ProbeGroup,
    RunHeader,
    RunStats,
)
from probeguard.log.writer import RunLogWriter, dump_json_line, read_run_jsonl

__all__ = [
    "RUN_LOG_VERSION",
    "CaseError",
    "CaseRecord",
    "ProbeGroup",
    "RunHeader",
    "RunLogWriter",
    "RunStats",
    "dump_json_line",
    "read_run_jsonl",
]

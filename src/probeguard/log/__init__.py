"""Run logs: streamed JSONL records and the final versioned run file."""

from probeguard.core.records import (
    RUN_LOG_VERSION,
    CaseError,
    CaseRecord,
    ProbeGroup,
    RunHeader,
    RunLog,
    RunStats,
)
from probeguard.log.writer import RunLogWriter, dump_json_line, read_run_jsonl

__all__ = [
    "RUN_LOG_VERSION",
    "CaseError",
    "CaseRecord",
    "ProbeGroup",
    "RunHeader",
    "RunLog",
    "RunLogWriter",
    "RunStats",
    "dump_json_line",
    "read_run_jsonl",
]

"""Run logs: streamed JSONL records and the final versioned run file."""

from probeguard.log.models import (RUN_LOG_VERSION, CaseError, CaseRecord, RunHeader, RunLog,
                                   RunStats)

__all__ = ["RUN_LOG_VERSION", "CaseError", "CaseRecord", "RunHeader", "RunLog", "RunStats"]

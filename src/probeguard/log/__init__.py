"""Run logs: streamed JSONL records (the records themselves are ``core.records``; the final
``run.json`` is ``results.run.RunLog``)."""

from probeguard.log.writer import RunLogWriter, dump_json_line, read_run_jsonl

__all__ = ["RunLogWriter", "dump_json_line", "read_run_jsonl"]

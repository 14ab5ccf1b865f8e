"""Standard RAG metrics for datasets (``probeguard eval``) and golden questions.

- ``records``: CSV/XLSX/JSON/JSONL datasets → ``EvalRecord`` (errors name row and field);
- ``judging``: the claim and relevance judges a ``JudgeConfig`` describes;
- ``standard``: one record's metrics from one claim×chunk judgment;
- ``summary``: means with bootstrap intervals, unscored counts, tag facets;
- ``thresholds``: pass/fail per metric;
- ``run``: ``evaluate`` — the whole command, writing ``eval.json`` and ``eval.md``.
"""

from __future__ import annotations

from probeguard.evaluation.records import EvalRecord, load_eval_records
from probeguard.evaluation.run import EvalResult, evaluate
from probeguard.evaluation.standard import METRICS, StandardScore, score_standard

__all__ = ["METRICS", "EvalRecord", "EvalResult", "StandardScore", "evaluate",
           "load_eval_records", "score_standard"]

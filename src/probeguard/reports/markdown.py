"""The Markdown report: a pure function of the run log.

It holds nothing that changes between two runs of the same scan (no timings, no call
counts, no timestamps), so the same inputs and seed give a byte-identical report; execution
statistics live in ``run.json``.
"""

from __future__ import annotations

import math
from typing import Any

from probeguard.log.models import CaseRecord, RunLog
from probeguard.reports.escape import md_inline
from probeguard.stats import Estimate

GOLDEN_ROWS = [
    ("retrieval_hit_at_k", "Retrieval hit@k (a gold document in the top-k)"),
    ("retrieval_all_evidence", "All gold documents retrieved (multi-hop)"),
    ("mrr", "MRR of the first gold document"),
    ("answer_contains", "Answer contains a gold answer"),
    ("false_refusal", "Refused an answerable question"),
    ("abstention", "Refused an unanswerable question (should be high)"),
    ("pass_rate", "Passed overall"),
]


def _estimate(value: Any) -> str:
    if isinstance(value, dict) and {"value", "low", "high", "n"} <= set(value):
        if value["value"] is None:  # NaN read back from run.json (written as null)
            return f"n/a (n={value['n']})"
        est = Estimate.model_validate(value)
        return est.format(3)
    if isinstance(value, float) and math.isnan(value):
        return "n/a"
    return md_inline(str(value))


def _mark(flag: Any) -> str:
    return "yes" if flag is True else "no" if flag is False else "–"


def _case_row(record: CaseRecord) -> str:
    case = record.case
    v = record.verdict
    if record.output is None:
        err = record.error
        status = f"ERROR {md_inline(err.type if err else '?', 60)}"
        answer = md_inline(err.message if err else "", 100)
    else:
        status = "pass" if v.get("passed") else "FAIL"
        answer = md_inline(record.output.answer, 120)
    rank = v.get("evidence_rank")
    return (f"| {md_inline(case.id, 40)} | {status} | {md_inline(case.question, 100)} | "
            f"{'–' if rank is None else rank} | {_mark(v.get('contains'))} | "
            f"{_mark(v.get('refused'))} | {answer} |")


def render_markdown(run: RunLog) -> str:
    cfg = run.config.get("pipeline", {})
    lines = [
        "# ProbeGuard scan report",
        "",
        f"- ProbeGuard {md_inline(run.probeguard_version)}, run log version {run.version}",
        # No code span around escaped text: inside one, the escapes would show as backslashes
        # (``my\_rag``) and an escaped backtick would still close the span.
        f"- Pipeline: {md_inline(run.pipeline_name, 60)} (fingerprint `{run.pipeline_fingerprint[:12]}`)",
        f"- Corpus fingerprint: `{(run.corpus_fingerprint or 'n/a')[:12]}`; seed {run.seed}",
    ]
    if cfg.get("type") == "reference":
        ref = cfg.get("reference", {})
        parts = ", ".join(f"{k}: {md_inline(str(ref.get(k)), 80)}"
                          for k in ("chunker", "embedder", "retriever", "top_k", "reranker",
                                    "generator", "prompt"))
        lines.append(f"- Reference pipeline: {parts}")
    golden = run.summary.get("golden")
    if golden:
        lines += ["", "## Golden questions", "",
                  f"{golden['cases']} cases, {golden['errors']} errors. "
                  "Rates with Wilson 95% intervals; MRR with a bootstrap interval.", "",
                  "| metric | value [95% CI] (n) |", "|---|---|"]
        lines += [f"| {label} | {_estimate(golden[key])} |" for key, label in GOLDEN_ROWS
                  if key in golden]
        golden_records = [r for r in run.records if r.case.probe == "golden"]
        failed = [r for r in golden_records if not r.verdict.get("passed")]
        lines += ["", "### Cases", "",
                  f"{len(failed)} of {len(golden_records)} cases failed or errored.", "",
                  "| case | result | question | gold rank | contains | refused | answer |",
                  "|---|---|---|---|---|---|---|"]
        lines += [_case_row(r) for r in golden_records]
    lines.append("")
    return "\n".join(lines)

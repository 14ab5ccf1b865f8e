"""The data the HTML report's drill-down reads: one row per failure unit (a probe group or a
golden question), its cases, their retrieved contexts (deduplicated into one chunk table) and
the attribution re-runs. Pure function of the run log; long texts are cut to keep the file
small enough to mail (``TEXT_LIMITS``); the full texts stay in ``run.json``.

Marks on a retrieved context, by rule:

- ``gold``: its document is one of the case's ``expected.evidence_doc_ids``;
- ``injected``: its document is in the case's ``variation.overlay`` (planted for this call);
- ``poisoned``: injected, and named by the case's probe as the planted attack
  (``case.meta`` keys in ``POISON_META_KEYS``);
- ``archived`` / ``draft`` / …: the chunk's ``metadata.status`` when it is not ``current``;
- ``cited``: the answer cites the chunk.

The planted signal (a canary, a false value, the poison's signal) is what ``case.meta`` holds
under ``SIGNAL_META_KEYS``; the report highlights it in the answer.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from probeguard.core.records import Attribution, CaseRecord, ProbeGroup
from probeguard.metrics.golden import GoldenVerdict
from probeguard.results.run import RunLog

__all__ = [
    "POISON_META_KEYS",
    "SIGNAL_META_KEYS",
    "TEXT_LIMITS",
    "columns",
    "packed",
    "report_data",
]

POISON_META_KEYS = ("poison_doc_ids", "injected_doc_id")
"""``case.meta`` keys under which probes name the documents they planted as attacks."""

SIGNAL_META_KEYS = ("canary", "signal", "signals", "new", "false_value", "altered_answer")
"""``case.meta`` keys holding the text an attack plants (found in an answer = adopted)."""

TEXT_LIMITS = {"question": 600, "answer": 900, "chunk": 700, "evidence": 300, "rerun": 300}
"""Characters kept per text in the embedded data (an ellipsis marks a cut)."""


def _cut(text: str | None, limit: int) -> str:
    if not text:
        return ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _scalar(value: Any) -> str:
    """A value as short display text (never a Python repr)."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.3f}"
    if isinstance(value, (list, tuple)):
        return ", ".join(_scalar(v) for v in value) or "–"
    if isinstance(value, dict):
        if {"value", "low", "high", "n"} <= set(value):
            v = value["value"]
            return "n/a" if v is None else f"{v:.3f} [{value['low']:.3f}, {value['high']:.3f}]"
        return "; ".join(f"{k}: {_scalar(v)}" for k, v in value.items())
    return str(value)


def _pairs(mapping: dict[str, Any], texts: _Texts, prefix: str = "") -> list[list[str | int]]:
    """``[key, text]`` rows; nested mappings one level deep as ``parent.key``."""
    rows: list[list[str | int]] = []
    for key, value in mapping.items():
        if isinstance(value, dict) and not prefix and value and "value" not in value:
            rows += _pairs(value, texts, f"{key}.")
        else:
            rows.append([prefix + str(key), texts(_cut(_scalar(value), TEXT_LIMITS["evidence"]))])
    return rows


def _strings(value: Any) -> list[str]:
    """The texts in a meta value: a string (of two or more characters), the ``value`` of a
    ``{kind, value}`` signal, or those of a list of them."""
    if isinstance(value, str):
        return [value] if len(value) >= 2 else []
    if isinstance(value, dict):
        return _strings(value.get("value"))
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


class _Chunks:
    """The deduplicated chunk table: ``[chunk_id, doc_id, title, text]`` rows, by first use;
    the text itself said once in ``texts`` (two chunkers often cut the same passage)."""

    def __init__(self, texts: _Texts) -> None:
        self.rows: list[list[str | int]] = []
        self._index: dict[tuple[str, str], int] = {}
        self._texts = texts

    def add(self, chunk_id: str, doc_id: str, title: str, text: str) -> int:
        key = (chunk_id, text)
        if key not in self._index:
            self._index[key] = len(self.rows)
            cut = self._texts(_cut(text, TEXT_LIMITS["chunk"]))
            self.rows.append([chunk_id, doc_id, title, cut])
        return self._index[key]


class _Texts:
    """Long texts said once: a text of at least ``MIN`` characters becomes its index in
    ``rows`` (answers, questions and evidence repeat across cases, groups and re-runs);
    shorter ones stay inline. The page resolves a number through ``texts``."""

    MIN = 24

    def __init__(self) -> None:
        self.rows: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, text: str) -> str | int:
        if len(text) < self.MIN:
            return text
        if text not in self._index:
            self._index[text] = len(self.rows)
            self.rows.append(text)
        return self._index[text]


def _variation(record: CaseRecord) -> str:
    """The counterfactual knobs of the call, in words."""
    v = record.case.variation
    parts = []
    if v.overlay:
        parts.append("injected: " + ", ".join(d.id for d in v.overlay))
    if v.exclude_doc_ids:
        parts.append("hidden: " + ", ".join(v.exclude_doc_ids))
    if v.chunking:
        parts.append(f"chunking: {v.chunking}")
    if v.contexts is not None:
        parts.append(f"oracle contexts: {len(v.contexts)}")
    if v.prompt:
        parts.append(f"prompt: {_cut(v.prompt, 60)}")
    if v.retrieval:
        parts.append("retrieval: " + _scalar(v.retrieval))
    if v.defences:
        parts.append("defences: " + _scalar(v.defences))
    if v.sample:
        parts.append(f"sample {v.sample}")
    return "; ".join(parts) or "as configured"


def _marks(record: CaseRecord, doc_id: str, chunk_id: str, status: Any) -> list[str]:
    case, out = record.case, record.output
    injected = {d.id for d in case.variation.overlay}
    poisoned = {s for k in POISON_META_KEYS for s in _strings(case.meta.get(k))}
    marks = []
    if doc_id in case.expected.evidence_doc_ids:
        marks.append("gold")
    if doc_id in injected:
        marks.append("poisoned" if doc_id in poisoned else "injected")
    if isinstance(status, str) and status and status != "current":
        marks.append(status)
    if out is not None and chunk_id in out.cited_chunk_ids:
        marks.append("cited")
    return marks


def _case(record: CaseRecord, chunks: _Chunks, texts: _Texts) -> dict[str, Any]:
    case, out, err = record.case, record.output, record.error
    contexts = []
    if out is not None:
        for r in sorted(out.retrieved, key=lambda r: r.rank):
            index = chunks.add(r.chunk_id, r.doc_id, r.title, r.text)
            marks = _marks(record, r.doc_id, r.chunk_id, r.metadata.get("status"))
            contexts.append([index, r.rank, marks])
    return {
        "id": case.id,
        "role": str(case.meta.get("role", "")),
        "q": texts(_cut(case.question, TEXT_LIMITS["question"])),
        "var": texts(_variation(record)),
        "tags": list(case.tags),
        "expect": texts(_scalar(list(case.expected.answers))) if case.expected.answers else "",
        "mode": case.expected.mode,
        "answer": texts(_cut(out.answer, TEXT_LIMITS["answer"])) if out is not None else "",
        "refused": bool(out.refused) if out is not None else None,
        "error": f"{err.type}: {_cut(err.message, 300)}" if err is not None else "",
        "ctx": contexts,
        "sig": sorted({s for k in SIGNAL_META_KEYS for s in _strings(case.meta.get(k))}),
    }


def _attribution(a: Attribution, texts: _Texts) -> dict[str, Any]:
    swaps = []
    for s in a.swaps:
        runs = [
            {
                "answer": texts(_cut(r.answer, TEXT_LIMITS["rerun"])),
                "refused": r.refused,
                "docs": texts(", ".join(r.retrieved_doc_ids[:10])),
                "error": f"{r.error.type}: {_cut(r.error.message, 200)}" if r.error else "",
            }
            for r in s.runs[:2]
        ]
        judged = {k: v for k, v in s.judged.items() if not isinstance(v, (dict, list))}
        swaps.append(
            {
                "swap": s.swap,
                "outcome": s.outcome,
                "reason": texts(_cut(s.reason, TEXT_LIMITS["evidence"])),
                "removed": texts(", ".join(s.removed_doc_ids)),
                "judged": texts(_cut(_scalar(judged), TEXT_LIMITS["evidence"])),
                "runs": runs,
            }
        )
    fix = a.recommendation or {}
    return {
        "cause": a.cause,
        "mech": a.mechanism_words or a.mechanism or "",
        "reason": texts(a.reason),
        "also": ", ".join(a.also),
        "fix": str(fix.get("title", "")),
        "swaps": swaps,
    }


def _tags(cases: Iterable[dict[str, Any]]) -> list[str]:
    return sorted({t for c in cases for t in c["tags"]})


def _unit(
    probe: str, group: str, outcome: str, cases: list[int], evidence: list[list[str | int]]
) -> dict[str, Any]:
    return {"probe": probe, "group": group, "outcome": outcome, "cases": cases, "ev": evidence}


def _group_outcome(g: ProbeGroup) -> str:
    return "unscored" if g.failed is None else "fail" if g.failed else "pass"


def _golden_outcome(record: CaseRecord, verdict: GoldenVerdict | None) -> str:
    if record.output is None:
        return "error"
    return "pass" if verdict is not None and verdict.passed else "fail"


def report_data(run: RunLog) -> dict[str, Any]:
    """``{"units": [...], "cases": [...], "chunks": [...], "texts": [...]}`` for the
    drill-down; units are the golden questions then the probe groups, in run order, each with
    its attribution."""
    texts = _Texts()
    chunks = _Chunks(texts)
    cases: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    for record in run.records:
        index[record.case.id] = len(cases)
        cases.append(_case(record, chunks, texts))
    units = []
    for record, verdict in run.golden_verdicts():
        evidence = _pairs(dict(record.verdict), texts) if record.verdict else []
        outcome = _golden_outcome(record, verdict)
        units.append(_unit("golden", record.case.id, outcome, [index[record.case.id]], evidence))
    for g in run.groups:
        members = [index[c] for c in g.case_ids if c in index]
        units.append(_unit(g.probe, g.group, _group_outcome(g), members, _pairs(g.evidence, texts)))
    attributed = {(a.probe, a.group): _attribution(a, texts) for a in run.attribution}
    for unit in units:
        att = attributed.get((unit["probe"], unit["group"]))
        unit["att"] = att
        unit["cause"] = att["cause"] if att else ""
        unit["mech"] = att["mech"] if att else ""
        unit["tags"] = _tags(cases[i] for i in unit["cases"])
        unit["q"] = cases[unit["cases"][0]]["q"] if unit["cases"] else ""
    return {"units": units, "cases": cases, "chunks": chunks.rows, "texts": texts.rows}


def columns(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Records with the same keys as one table: ``{"cols": keys, "rows": [[values]]}`` —
    each key said once instead of once per record (the page's ``objects`` undoes it).
    The keys are the first record's, in order; every record must have exactly those."""
    cols = list(rows[0]) if rows else []
    return {"cols": cols, "rows": [[row[k] for k in cols] for row in rows]}


def packed(data: dict[str, Any]) -> dict[str, Any]:
    """``report_data`` as the page embeds it: cases, units and each attribution's swaps as
    ``columns`` tables (a third smaller; the same content)."""
    units = []
    for unit in data["units"]:
        att = unit["att"]
        units.append({**unit, "att": att and {**att, "swaps": columns(att["swaps"])}})
    return {**data, "units": columns(units), "cases": columns(data["cases"])}

"""Small hand-built run directories for the release-gate tests: golden questions and probe
groups whose verdicts a test chooses, written as ``run.json`` with the real models."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from probeguard._version import __version__
from probeguard.core.artifacts import write_artifact
from probeguard.core.cases import Case
from probeguard.core.pipeline import PipelineOutput
from probeguard.core.records import CaseError, CaseRecord, ProbeGroup, RunStats
from probeguard.metrics.golden import GoldenVerdict
from probeguard.results.run import RunLog

Verdict = bool | None | str
"""True: failed; False: passed; None: unscored; ``"error"``: the case errored."""


def _golden_record(case_id: str, verdict: Verdict, tags: tuple[str, ...]) -> CaseRecord:
    case = Case(id=case_id, question=f"What about {case_id}?", tags=tags)
    if verdict == "error":
        error = CaseError(type="PipelineCallError", message="HTTP 503", transient=True)
        return CaseRecord(case=case, call_key=f"k-{case_id}", error=error)
    passed = not verdict
    golden = GoldenVerdict(refused=False, hit=True, contains=passed, passed=passed)
    return CaseRecord(
        case=case,
        call_key=f"k-{case_id}",
        output=PipelineOutput(answer=f"answer to {case_id} ({'right' if passed else 'wrong'})"),
        verdict=golden.model_dump(mode="json"),
    )


def _group(probe: str, group: str, verdict: Verdict, tags: tuple[str, ...]):
    case = Case(id=f"{probe}:{group}:ask", question=f"Probe {group}?", probe=probe, tags=tags)
    errored = verdict == "error"
    record = CaseRecord(
        case=case,
        call_key=f"k-{case.id}",
        output=None if errored else PipelineOutput(answer="an answer"),
        error=CaseError(type="TimeoutError", message="timed out") if errored else None,
    )
    failed = None if errored else verdict
    evidence = {"question": case.question, "reason": "canary in the answer" if failed else "held"}
    if probe == "attack_types":
        evidence["attack_type"] = "temporal_conflict"
    return record, ProbeGroup(
        probe=probe, group=group, failed=failed, case_ids=[case.id], evidence=evidence
    )


def make_run(
    golden: Mapping[str, Verdict],
    groups: Mapping[tuple[str, str], Verdict] | None = None,
    *,
    corpus: str = "corpus-1",
    seed: int = 0,
    tags: tuple[str, ...] = ("policy",),
) -> RunLog:
    """A run log with these golden verdicts and probe groups (keys ``(probe, group)``)."""
    records = [_golden_record(cid, v, tags) for cid, v in golden.items()]
    probe_groups = []
    for (probe, group), verdict in (groups or {}).items():
        record, pg = _group(probe, group, verdict, tags)
        records.append(record)
        probe_groups.append(pg)
    errors = sum(1 for r in records if r.error is not None)
    return RunLog(
        probeguard_version=__version__,
        pipeline_name="fake",
        pipeline_fingerprint="fp",
        corpus_fingerprint=corpus,
        seed=seed,
        config={},
        stats=RunStats(cases=len(records), errors=errors),
        records=records,
        groups=probe_groups,
    )


def write_run(path: Path, run: RunLog) -> Path:
    """``run`` saved as ``path/run.json``; the directory."""
    path.mkdir(parents=True, exist_ok=True)
    write_artifact(path / "run.json", run)
    return path


def hijack_runs(base: Path, new_failures: int = 8, n: int = 12) -> tuple[Path, Path]:
    """A baseline where ``prompt_hijack`` holds on ``n`` questions, and a candidate where the
    first ``new_failures`` of them fail; golden questions unchanged."""
    golden = {f"q{i:02d}": i % 3 == 0 for i in range(n)}
    before = {("prompt_hijack", f"q{i:02d}"): False for i in range(n)}
    after = {("prompt_hijack", f"q{i:02d}"): i < new_failures for i in range(n)}
    return (
        write_run(base / "baseline", make_run(golden, before)),
        write_run(base / "candidate", make_run(golden, after)),
    )

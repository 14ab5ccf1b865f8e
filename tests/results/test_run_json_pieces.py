"""``run.json`` streamed record by record (issue 18): the same bytes as
``model_dump_json(indent=2)``, without the whole run in memory at once."""

from __future__ import annotations

import math
import tracemalloc
from pathlib import Path

from probeguard._version import __version__
from probeguard.core.cases import Case
from probeguard.core.io import atomic_write_pieces
from probeguard.core.pipeline import PipelineOutput, RetrievedChunk
from probeguard.core.records import CaseError, CaseRecord, RunStats
from probeguard.results.run import RunLog, SynthesizedInputs, run_json_pieces


def record(i: int, text: str = "t") -> CaseRecord:
    if i % 3 == 2:
        return CaseRecord(
            case=Case(id=f"c{i}", question="q"),
            call_key="k" * 8,
            error=CaseError(type="E", message="m\n\u2028é", transient=True),
        )
    output = PipelineOutput(
        answer=text,
        latency_s=0.1 + 0.2,
        retrieved=[
            RetrievedChunk(chunk_id="c", doc_id="d", text=text, rank=1, score=1 / 3, metadata={})
        ],
        metadata={"nan": math.nan, "inf": -math.inf, "nested": {"x": [1 / 7, True, None, {}]}},
    )
    return CaseRecord(
        case=Case(id=f"c{i}", question="q?"),
        call_key="k" * 8,
        output=output,
        duration_s=2 / 3,
        verdict={"score": 1 / 9, "empty": [], "nan": math.nan},
    )


def run_log(records: list[CaseRecord], synthesized: bool = False) -> RunLog:
    return RunLog(
        probeguard_version=__version__,
        pipeline_name="fake",
        pipeline_fingerprint="fp",
        corpus_fingerprint="corpus",
        seed=7,
        config={"x": 1 / 3, "list": [0.1 + 0.2]},
        stats=RunStats(cases=len(records), wall_s=1 / 3),
        records=records,
        synthesized=SynthesizedInputs(golden=1, attacks=0, seed=1, generator="g", by_type={})
        if synthesized
        else None,
        dataset_manifests={"a.jsonl": "h"} if synthesized else None,
    )


def test_the_pieces_are_the_bytes_of_model_dump_json() -> None:
    for run in (
        run_log([]),
        run_log([record(0)]),
        run_log([record(i) for i in range(7)], synthesized=True),
    ):
        assert "".join(run_json_pieces(run)) == run.model_dump_json(indent=2) + "\n"


def test_writing_run_json_never_holds_the_whole_file(tmp_path: Path) -> None:
    """Before streaming, the file's text (and the dump under it) existed whole: the peak
    was several times the file's size; now it is about one record's."""
    run = run_log([record(i, text=f"{i} " + "word " * 400) for i in range(300)])
    path = tmp_path / "run.json"
    tracemalloc.start()
    try:
        atomic_write_pieces(path, run_json_pieces(run), fsync=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    size = path.stat().st_size
    assert size > 1_000_000
    assert peak < size / 10
    assert path.read_text(encoding="utf-8") == run.model_dump_json(indent=2) + "\n"

"""One serialisation serves the logged record and its run.jsonl line (issue 18): the line of
a record equals the line of the record as it reads back, awkward values included."""

from __future__ import annotations

import json
import math

import numpy as np

from probeguard.core.cases import Case
from probeguard.core.floats import normalise_floats
from probeguard.core.pipeline import PipelineOutput, RetrievedChunk
from probeguard.core.records import CaseError, CaseRecord
from probeguard.log.writer import as_logged, dump_json_line, logged_with_line


def awkward_record() -> CaseRecord:
    output = PipelineOutput(
        answer="x",
        latency_s=0.1 + 0.2,
        retrieved=[
            RetrievedChunk(
                chunk_id="c", doc_id="d", text="t", rank=1, score=1 / 3, metadata={"p": (1, 2.5)}
            )
        ],
        metadata={
            "nan": math.nan,
            "inf": -math.inf,
            "array": np.array([0.1, 0.7]),
            "scalar": np.float32(0.3),
            "set": {"b", "a"},
            "nested": {"x": [1.0000000000001, True, None]},
        },
    )
    return CaseRecord(
        case=Case(id="c1", question="q"), call_key="k" * 8, output=output, duration_s=2 / 3
    )


def test_the_line_of_a_record_is_the_line_of_its_logged_copy() -> None:
    for record in (
        awkward_record(),
        CaseRecord(
            case=Case(id="c2", question="q"),
            call_key="k" * 8,
            error=CaseError(type="E", message="m", transient=True),
        ),
    ):
        logged, line = logged_with_line(record)
        assert dump_json_line(logged) == dump_json_line(as_logged(record))
        assert line == dump_json_line(record) == dump_json_line(logged)


def test_normalise_floats_dispatch_keeps_subclasses_and_tuples() -> None:
    class MyFloat(float):
        pass

    class MyDict(dict):
        pass

    value = MyDict(a=MyFloat(1 / 3), b=(0.1 + 0.2, "s"), c=[True, 3, None, math.inf])
    expected = {"a": 0.3333333333, "b": [0.3, "s"], "c": [True, 3, None, math.inf]}
    assert normalise_floats(value) == expected


def test_the_logged_record_reads_back_as_the_log_reader_reads_it() -> None:
    """``logged_with_line`` parses with pydantic's JSON validator; the log reader uses
    ``json.loads``: both give the same record, non-finite floats included."""
    record = awkward_record()
    logged, line = logged_with_line(record)
    assert dump_json_line(logged) == dump_json_line(CaseRecord.model_validate(json.loads(line)))
    assert logged.output is not None and math.isnan(logged.output.metadata["nan"])

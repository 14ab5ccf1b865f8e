"""``log.reuse``: the logged record built without parsing its line is exactly the record the
line reads back as (same classes, same types, same values, same line), and the line is the
one ``dump_json_line`` writes; where it cannot be sure, the line is parsed as before."""

from __future__ import annotations

import enum
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from probeguard.core.cases import Case, Expected
from probeguard.core.documents import Document
from probeguard.core.pipeline import PipelineOutput, RetrievedChunk, Usage, Variation
from probeguard.core.records import CaseError, CaseRecord
from probeguard.log import reuse as reuse_module
from probeguard.log.reuse import NotReusable, reuse
from probeguard.log.writer import dump_json_line, logged_with_line


def assert_exactly(a: Any, b: Any, where: str = "record") -> None:
    """``a`` and ``b`` hold the same classes, types and values all the way down (NaN
    equals NaN; a dict's key order counts)."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, BaseModel):
        assert_exactly(a.__dict__, b.__dict__, where)
    elif isinstance(a, dict):
        assert list(a) == list(b), f"{where}: keys {list(a)} vs {list(b)}"
        for key in a:
            assert_exactly(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_exactly(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b), where
    else:
        assert a == b, f"{where}: {a!r} vs {b!r}"


def check(record: CaseRecord) -> CaseRecord:
    """``logged_with_line`` against the parse of the line; returns the logged record."""
    logged, line = logged_with_line(record)
    assert line == dump_json_line(record)
    assert_exactly(logged, CaseRecord.model_validate_json(line))
    assert dump_json_line(logged) == line
    return logged


def http_record(**output: Any) -> CaseRecord:
    chunk = RetrievedChunk(chunk_id="c1", doc_id="d1", text="ctx", rank=1, score=0.123456789012)
    return CaseRecord(
        case=Case(id="c1", question="q", tags=("a", "b"), expected=Expected(answers=("x",))),
        call_key="k" * 64,
        output=PipelineOutput(answer="a", retrieved=[chunk], latency_s=0.05123456789123, **output),
        attempts=1,
        duration_s=2 / 3,
    )


def test_a_plain_record_is_reused_with_its_floats_rounded() -> None:
    record = http_record()
    logged = check(record)
    assert logged is not record and logged.case is record.case  # the case is shared
    assert logged.duration_s == 0.6666666667
    assert logged.output is not None and logged.output.latency_s == 0.05123456789
    assert logged.output.retrieved[0].score == 0.123456789
    assert logged_with_line(logged)[0] is logged  # already rounded: itself


class Colour(enum.Enum):
    RED = "red"


@pytest.mark.parametrize(
    "metadata",
    [
        {"pair": (1, 2)},
        {"set": {"a"}},
        {"np": np.float64(0.5)},
        {"array": np.array([0.1])},
        {"enum": Colour.RED},
        {"model": Usage(prompt_tokens=1)},
        {"x": {1: "int key"}},
        {"nan": math.nan, "inf": -math.inf, "nested": [{"x": [0.1 + 0.2, None, True, 2**80]}]},
        {"sub": type("S", (str,), {})("s")},
    ],
)
def test_awkward_free_form_values_read_back_the_same(metadata: dict[Any, Any]) -> None:
    check(http_record(metadata=metadata))
    check(
        CaseRecord(
            case=Case(id="c", question="q", meta=metadata),
            call_key="k" * 8,
            error=CaseError(type="E", message="m"),
        )
    )


def test_variations_errors_and_dropped_fields_read_back_the_same() -> None:
    poison = Document(id="p", text="t", metadata={"w": 0.1 + 0.2, "t": (1,)})
    for variation in (
        Variation(exclude_doc_ids=("b", "a")),
        Variation(overlay=(poison,), retrieval={"top_k": 3, "w": 1 / 3}),
        Variation(contexts=("x",), prompt="p", sample=2, retrieve_only=True),
        Variation(defences={"sanitise": True}),
    ):
        check(
            http_record().model_copy(
                update={"case": Case(id="v", question="q", variation=variation)}
            )
        )
    expected = Expected(must_cite=("d",), must_not_cite=("e",), mode="abstain")
    check(CaseRecord(case=Case(id="e", question="q", expected=expected), call_key="k" * 8))


def test_unvalidated_values_fall_back_to_parsing() -> None:
    """An int put in a float field by ``model_copy`` reads back as a float: not reused."""
    record = http_record().model_copy(update={"duration_s": 1})
    with pytest.raises(NotReusable):
        reuse(record, record.model_dump(mode="python"))
    logged, line = logged_with_line(record)
    assert line == dump_json_line(record)
    assert_exactly(logged, CaseRecord.model_validate_json(line))
    assert type(logged.duration_s) is float


def test_a_class_with_an_unsure_field_is_parsed() -> None:
    class Loose(BaseModel):
        value: Any = None

    assert reuse_module._plan(Loose) is None
    assert reuse_module._plan(CaseRecord) is not None


json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
)
free = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.tuples(inner, inner),
        st.dictionaries(st.text(max_size=3), inner, max_size=3),
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(
    meta=st.dictionaries(st.text(max_size=3), free, max_size=3),
    metadata=st.dictionaries(st.text(max_size=3), free, max_size=3),
    score=st.none() | st.floats(allow_nan=False),
    latency=st.none() | st.floats(min_value=0, max_value=1e6),
    duration=st.floats(allow_nan=True, allow_infinity=True),
)
def test_any_record_reads_back_as_its_logged_copy(
    meta: dict[str, Any],
    metadata: dict[str, Any],
    score: float | None,
    latency: float | None,
    duration: float,
) -> None:
    chunk = RetrievedChunk(chunk_id="c", doc_id="d", text="t", rank=1, score=score)
    output = PipelineOutput(answer="a", retrieved=[chunk], latency_s=latency, metadata=metadata)
    case = Case(id="c", question="q", meta=meta, tags=("t",))
    check(CaseRecord(case=case, call_key="k" * 8, output=output, duration_s=duration))


def test_the_original_record_is_left_as_it_was() -> None:
    record = http_record(metadata={"a": {"b": [0.1 + 0.2]}})
    before = dump_json_line(record), record.output.model_dump() if record.output else None
    logged = check(record)
    assert record.output is not None and record.output.metadata == {"a": {"b": [0.1 + 0.2]}}
    assert (
        record.duration_s == 2 / 3
        and (dump_json_line(record), record.output.model_dump()) == before
    )
    assert logged.output is not None and logged.output.metadata == {"a": {"b": [0.3]}}
